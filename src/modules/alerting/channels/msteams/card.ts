/**
 * The Adaptive Card of an alert. Monitored data never reaches a markdown-interpreting
 * field unescaped: the title and body are TextRuns of RichTextBlocks (which interpret
 * no markdown); the facts, whose values Teams renders as markdown, are escaped for
 * CommonMark (a backslash before every punctuation character it could read as syntax).
 * `{{` is broken in both, so no text becomes a DATE()/TIME() function. The one link is
 * the service's own.
 */
import type { AlertMessage } from "../provider";
import { bodyOf, cut, factsOf, titleOf } from "../render";

/** CommonMark escape: every ASCII punctuation character that markdown could interpret. */
export function escapeCardMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!<>|~:"'&]/g, (c) => `\\${c}`);
}

/** Plain text for a TextRun: only the {{...}} functions of card text are defused. */
const plain = (text: string) => text.replace(/\{\{/g, "{\u200b{");

const COLOR: Record<string, string> = { critical: "Attention", high: "Attention", medium: "Warning", low: "Accent", info: "Default" };

export function alertCard(a: AlertMessage) {
  return {
    type: "message",
    attachments: [
      {
        contentType: "application/vnd.microsoft.card.adaptive",
        contentUrl: null,
        content: {
          $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
          type: "AdaptiveCard",
          version: "1.4",
          msteams: { width: "Full" },
          body: [
            { type: "RichTextBlock", inlines: [{ type: "TextRun", text: plain(cut(titleOf(a), 400)), weight: "Bolder", size: "Medium", color: a.action === "resolve" ? "Good" : (COLOR[a.rule.severity] ?? "Default") }] },
            { type: "FactSet", facts: factsOf(a).map(([title, value]) => ({ title: escapeCardMarkdown(title), value: escapeCardMarkdown(cut(value, 500)) })) },
            { type: "RichTextBlock", inlines: [{ type: "TextRun", text: plain(cut(bodyOf(a), 8000)), fontType: "Monospace", size: "Small" }] },
          ],
          actions: [{ type: "Action.OpenUrl", title: "Open in Trust-Plane", url: a.url }],
        },
      },
    ],
  };
}
