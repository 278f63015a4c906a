// The served OpenAPI document says every schema's type and keeps null where the API sends it.
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { describe, expect, it } from "vitest";
import { checkDocument, normalizeDocument, orNull } from "../../src/platform/openapi-document";
import { openApiDocument } from "../security/openapi-routes";

const Part = z.object({ a: z.string() }).openapi("Part");

/** A document with `Part` as a component (declared by a first route) and `schema` in a second route. */
function documentOf(schema: z.ZodType) {
  const app = new OpenAPIHono();
  for (const [path, s] of [["/part", Part], ["/x", schema]] as const) {
    const route = createRoute({ method: "get", path, responses: { 200: { description: "OK", content: { "application/json": { schema: s } } } } });
    app.openapi(route, (c) => c.json({}, 200));
  }
  return app.getOpenAPI31Document({ openapi: "3.1.0", info: { title: "t", version: "1" } });
}

describe("OpenAPI document", () => {
  it("the served document has no schema without a type and no allOf that loses null", () => {
    expect(checkDocument(openApiDocument)).toEqual([]);
  });

  it("a component made nullable with .nullable() is reported; orNull() renders anyOf [ref, null] with its description", () => {
    const wrong = documentOf(z.object({ part: Part.nullable() }).openapi("Holder"));
    expect(checkDocument(wrong)).toContain("#/components/schemas/Holder/properties/part: allOf of a component and null accepts no null (declare it with orNull())");
    const right = normalizeDocument(documentOf(z.object({ part: orNull(Part).openapi({ description: "null: none yet" }) }).openapi("Holder")));
    expect((right.components!.schemas!.Holder as { properties: unknown }).properties).toEqual({
      part: { anyOf: [{ $ref: "#/components/schemas/Part" }, { type: "null" }], description: "null: none yet", type: ["object", "null"] },
    });
    expect(checkDocument(right)).toEqual([]);
  });

  it("restates a described reference, an extended component and any-value maps with their types, accepting the same values", () => {
    const Extended = Part.extend({ b: z.number().int() }).openapi("Extended");
    const doc = documentOf(
      z.object({ described: Part.openapi({ description: "the part" }), extended: Extended, settings: z.record(z.string(), z.unknown()) }).openapi("Holder"),
    );
    expect(checkDocument(doc).length).toBeGreaterThan(0);
    const normalized = normalizeDocument(doc);
    const schemas = normalized.components!.schemas!;
    expect((schemas.Holder as { properties: unknown }).properties).toMatchObject({
      described: { $ref: "#/components/schemas/Part", description: "the part" },
      settings: { type: "object", additionalProperties: true },
    });
    expect(schemas.Extended).toMatchObject({ type: "object", allOf: [{ $ref: "#/components/schemas/Part" }, { type: "object", required: ["b"] }] });
    expect(checkDocument(normalized)).toEqual([]);
  });
});
