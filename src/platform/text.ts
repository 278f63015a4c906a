/**
 * Human-entered text (names, descriptions, notes, rule expressions) is shown back in
 * consoles, mails, Slack messages and PDFs. It must not carry characters that make it
 * display as something other than what is stored: control characters (C0, DEL, C1;
 * tab and line breaks only in multi-line text), the bidirectional controls of "Trojan
 * Source" (the embeddings, overrides and isolates U+202A-202E and U+2066-2069, and the
 * marks U+200E, U+200F and U+061C, which reorder neutral characters around them), the
 * Unicode line and paragraph separators U+2028 and U+2029 (line breaks that many
 * viewers honour and others do not, so a line can hide below another), or lone UTF-16
 * surrogates (not text at all; JSON "\ud800" can produce them).
 *
 * One refinement for every request schema with such fields: `safeText` for a
 * single-line name, `safeMultilineText` for descriptions and notes, or
 * `refuseUnsafeText(schema, multiline)` on a string schema built otherwise. Each marks
 * the field in the OpenAPI document (`x-text: "single-line" | "multi-line"`), so the
 * security suite finds every field it guards there. A refusal is a 400
 * `validation_error` whose detail names the field.
 */
import { z } from "@hono/zod-openapi";

const C0_SINGLE_LINE = /[\u0000-\u001f\u007f-\u009f]/;
const C0_MULTILINE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
const BIDI_CONTROLS = /[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/;
const SEPARATORS = /[\u2028\u2029]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const codePoint = (c: string) => c.charCodeAt(0).toString(16).padStart(4, "0").toUpperCase();

/** Why the text is refused, or null. */
export function unsafeTextReason(value: string, multiline: boolean): string | null {
  const control = (multiline ? C0_MULTILINE : C0_SINGLE_LINE).exec(value);
  if (control) return `contains the control character U+${codePoint(control[0])}`;
  const bidi = BIDI_CONTROLS.exec(value);
  if (bidi) return `contains the bidirectional control U+${codePoint(bidi[0])}`;
  const separator = SEPARATORS.exec(value);
  if (separator) return `contains the Unicode ${separator[0] === "\u2028" ? "line" : "paragraph"} separator U+${codePoint(separator[0])}`;
  if (LONE_SURROGATE.test(value)) return "contains a lone UTF-16 surrogate (not valid Unicode text)";
  return null;
}

/** The refinement: `z.string().superRefine(rejectUnsafeText(false))`. */
export function rejectUnsafeText(multiline: boolean) {
  return (value: string, ctx: z.RefinementCtx) => {
    const reason = unsafeTextReason(value, multiline);
    if (reason) ctx.addIssue({ code: "custom", message: reason });
  };
}

/** The OpenAPI extension that marks a field guarded by the refinement. */
export const TEXT_MARK = "x-text";

/** `schema` refusing unsafe text, and marked so in the OpenAPI document. */
export const refuseUnsafeText = (schema: z.ZodString, multiline: boolean) =>
  schema.superRefine(rejectUnsafeText(multiline)).openapi({ [TEXT_MARK]: multiline ? "multi-line" : "single-line" });

/** A single-line name: trimmed, 1..max characters, no unsafe characters. */
export const safeText = (max: number) => refuseUnsafeText(z.string().trim().min(1).max(max), false);

/** A description or note: up to max characters, line breaks and tabs allowed, no other unsafe characters. */
export const safeMultilineText = (max: number) => refuseUnsafeText(z.string().max(max), true);
