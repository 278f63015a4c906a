/**
 * Human-entered text (names, descriptions, notes) is shown back in consoles, mails,
 * Slack messages and PDFs. It must not carry characters that make it display as
 * something other than what is stored: control characters (C0, DEL, C1; tab and
 * line breaks only in multi-line text), the bidirectional embedding, override and
 * isolate controls of "Trojan Source" (U+202A-202E, U+2066-2069), or lone UTF-16
 * surrogates (not text at all; JSON "\ud800" can produce them).
 *
 * One refinement for every request schema with such fields: `safeText` for a
 * single-line name, `safeMultilineText` for descriptions and notes, or
 * `.superRefine(rejectUnsafeText(multiline))` on a schema built otherwise.
 * A refusal is a 400 `validation_error` whose detail names the field.
 */
import { z } from "@hono/zod-openapi";

const C0_SINGLE_LINE = /[\u0000-\u001f\u007f-\u009f]/;
const C0_MULTILINE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
const BIDI_CONTROLS = /[\u202a-\u202e\u2066-\u2069]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why the text is refused, or null. */
export function unsafeTextReason(value: string, multiline: boolean): string | null {
  const control = (multiline ? C0_MULTILINE : C0_SINGLE_LINE).exec(value);
  if (control) return `contains the control character U+${control[0].charCodeAt(0).toString(16).padStart(4, "0").toUpperCase()}`;
  const bidi = BIDI_CONTROLS.exec(value);
  if (bidi) return `contains the bidirectional control U+${bidi[0].charCodeAt(0).toString(16).toUpperCase()}`;
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

/** A single-line name: trimmed, 1..max characters, no unsafe characters. */
export const safeText = (max: number) => z.string().trim().min(1).max(max).superRefine(rejectUnsafeText(false));

/** A description or note: up to max characters, line breaks and tabs allowed, no other unsafe characters. */
export const safeMultilineText = (max: number) => z.string().max(max).superRefine(rejectUnsafeText(true));
