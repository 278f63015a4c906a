/** One zod declaration per event gives the CEL variable schema (src/platform/event-variables.ts). */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { variablesOf } from "../../src/platform/event-variables";
import { rdapVariables } from "../../src/modules/rdap/events";

describe("variablesOf", () => {
  it("maps every zod shape to its CEL type, nested objects and object lists included", () => {
    const schema = z.object({
      s: z.string().describe("a string"),
      i: z.number().int().describe("an int"),
      d: z.number().describe("a double"),
      b: z.boolean().optional().describe("a bool"),
      ls: z.array(z.string()).describe("strings"),
      li: z.array(z.number().int()).describe("ints"),
      o: z.object({ x: z.string().describe("x") }).describe("an object"),
      lo: z.array(z.object({ y: z.number().int().describe("y") })).describe("objects"),
      m: z.record(z.string(), z.unknown()).describe("free-form"),
    });
    expect(variablesOf(schema).map((v) => `${v.path}:${v.type}`)).toEqual([
      "s:string",
      "i:int",
      "d:double",
      "b:bool",
      "ls:list<string>",
      "li:list<int>",
      "o:object",
      "o.x:string",
      "lo:list<object>",
      "lo[].y:int",
      "m:map<string, dyn>",
    ]);
  });

  it("refuses a field without a description or without a CEL type", () => {
    expect(() => variablesOf(z.object({ s: z.string() }))).toThrow(/no description/);
    expect(() => variablesOf(z.object({ l: z.array(z.boolean()).describe("bools") }))).toThrow(/list of bool/);
  });

  it("gives the RDAP event exactly the documented variables, after the event type and collection fields every module has", () => {
    expect(rdapVariables.map((v) => `${v.path}:${v.type}`)).toEqual([
      "event_type:string",
      "collection:object",
      "collection.state:string",
      "collection.error_class:string",
      "collection.error_message:string",
      "collection.failing_since:string",
      "domain:string",
      "tld:string",
      "rdap:object",
      "rdap.current:map<string, dyn>",
      "rdap.previous:map<string, dyn>",
      "metadata:object",
      "metadata.fetched_at:string",
      "metadata.rdap_server:string",
      "metadata.http_status:int",
    ]);
  });
});
