/** Setting kinds several providers share. */
import { z } from "@hono/zod-openapi";

/** An absolute http(s) URL (where it may point is the egress policy's to say, in `check`). */
export const httpUrl = () =>
  z
    .string()
    .max(2000)
    .superRefine((value, ctx) => {
      let u: URL;
      try {
        u = new URL(value);
      } catch {
        ctx.addIssue({ code: "custom", message: "must be an absolute http(s) URL" });
        return;
      }
      if (u.protocol !== "http:" && u.protocol !== "https:") ctx.addIssue({ code: "custom", message: "must be an http or https URL" });
    });

/** An incident tool's service region: which of its public endpoints (configurable) is used. */
export const region = () => z.enum(["us", "eu"]).default("us");
