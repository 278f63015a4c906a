/** The HTML part of an alert mail: every value escaped for HTML (text content and attribute values). */
import type { AlertMessage } from "../provider";
import { bodyOf, factsOf, titleOf } from "../render";

const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]);
}

export function alertHtml(a: AlertMessage): string {
  const rows = factsOf(a)
    .map(([k, v]) => `<tr><th align="left" style="padding:2px 12px 2px 0">${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`)
    .join("");
  return [
    "<!doctype html><html><body style=\"font-family:sans-serif\">",
    `<h2 style="font-size:16px">${escapeHtml(titleOf(a))}</h2>`,
    `<table style="border-collapse:collapse;font-size:14px">${rows}</table>`,
    `<pre style="white-space:pre-wrap;font-size:13px">${escapeHtml(bodyOf(a))}</pre>`,
    `<p><a href="${escapeHtml(a.url)}">Open in Trust-Plane</a></p>`,
    "</body></html>",
  ].join("");
}
