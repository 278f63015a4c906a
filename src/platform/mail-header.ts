/**
 * Header values of the mail we send. A subject is made of monitored data (a
 * certificate's subject through a rule's template), so it may carry a CR/LF that would
 * end the header and start another (`Bcc:`), or any other control character. Every
 * header value goes through `headerText` (control characters and Unicode line
 * separators folded to one space) and, for the wire, `encodeHeaderText`: plain when it
 * is printable ASCII, else RFC 2047 encoded-words (UTF-8, base64), never a line break,
 * at most MAX_HEADER_CHARS on the line.
 */

/** Room left on a header line (RFC 5322: 998) after the field name. */
const MAX_HEADER_CHARS = 900;
/** An encoded-word is at most 75 characters (RFC 2047 2): `=?UTF-8?B?` + 60 base64 characters (45 bytes) + `?=`. */
const BYTES_PER_WORD = 45;

const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;

/** The value with every control character and line separator folded to one space. */
export function headerText(value: string): string {
  return value.replace(UNSAFE, " ").replace(/\s+/g, " ").trim();
}

const base64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

/** The value as it may stand in a header line: printable ASCII as is, anything else as RFC 2047 encoded-words. */
export function encodeHeaderText(value: string): string {
  const text = headerText(value);
  if (/^[\x20-\x7e]*$/.test(text)) return text.length > MAX_HEADER_CHARS ? `${text.slice(0, MAX_HEADER_CHARS - 3)}...` : text;
  const encoder = new TextEncoder();
  const words: string[] = [];
  let length = 0;
  let chunk = "";
  const flush = () => {
    if (!chunk) return true;
    const word = `=?UTF-8?B?${base64(encoder.encode(chunk))}?=`;
    if (length + word.length + 1 > MAX_HEADER_CHARS) return false;
    words.push(word);
    length += word.length + 1;
    chunk = "";
    return true;
  };
  // Whole code points per word: a character's bytes never split across two words.
  for (const ch of text) {
    if (encoder.encode(chunk + ch).length > BYTES_PER_WORD && !flush()) return words.join(" ");
    chunk += ch;
  }
  flush();
  return words.join(" ");
}
