/**
 * The Discord message of an alert: one embed. Discord reads markdown in an embed's
 * title, description and field values (masked links `[text](url)` included) and
 * mentions (`@everyone`, `<@id>`); every such character of monitored data is
 * backslash-escaped, and `allowed_mentions.parse: []` makes sure no mention pings anyone
 * whatever the text. Lengths as Discord documents them (title 256, description 4096,
 * field value 1024).
 */
import type { AlertMessage } from "../provider";
import { bodyOf, factsOf, titleOf } from "../render";

export function escapeDiscord(text: string): string {
  return text.replace(/[\\*_~`|>#\-[\]()<@:!]/g, (c) => `\\${c}`);
}

const COLOR: Record<string, number> = { critical: 0xb91c1c, high: 0xea580c, medium: 0xca8a04, low: 0x2563eb, info: 0x6b7280 };

/** Escaped, then cut to Discord's limit without splitting an escape from its character. */
function field(text: string, max: number): string {
  const escaped = escapeDiscord(text);
  if (escaped.length <= max) return escaped;
  let kept = escaped.slice(0, max - 1);
  const trailing = /\\+$/.exec(kept)?.[0].length ?? 0;
  if (trailing % 2 === 1) kept = kept.slice(0, -1);
  return `${kept}…`;
}

export function alertEmbed(a: AlertMessage) {
  return {
    username: "Trust-Plane",
    allowed_mentions: { parse: [] as string[] },
    embeds: [
      {
        title: field(titleOf(a), 256),
        description: field(bodyOf(a), 4096),
        url: a.url,
        color: a.action === "resolve" ? 0x15803d : (COLOR[a.rule.severity] ?? 0x6b7280),
        fields: factsOf(a).map(([name, value]) => ({ name: field(name, 256), value: field(value, 1024) || "-", inline: name !== "Event" })),
        timestamp: a.fired_at,
        footer: { text: "Trust-Plane" },
      },
    ],
  };
}
