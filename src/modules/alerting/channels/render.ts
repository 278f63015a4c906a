/**
 * What every provider says about an alert, before escaping for its medium: the title
 * line of each action and the facts worth a glance. Providers escape these for their
 * own format (Slack mrkdwn, Discord markdown, Adaptive Card markdown, HTML, RFC 2047).
 */
import type { AlertMessage } from "./provider";

/** The title of the message: the alert's subject (the rule's template), prefixed with what happened to it. */
export function titleOf(a: AlertMessage): string {
  const base = a.message.subject;
  switch (a.action) {
    case "trigger":
      return a.occurrences > 1 ? `${base} (${a.occurrences} times)` : base;
    case "acknowledge":
      return `Acknowledged${a.acknowledged_by ? ` by ${a.acknowledged_by}` : ""}: ${base}`;
    case "resolve":
      return `Resolved: ${base}`;
  }
}

/** The text under the title: the message body, or why the alert was resolved. */
export function bodyOf(a: AlertMessage): string {
  if (a.action === "resolve") return a.resolution ? `${a.resolution}\n\n${a.message.body}` : a.message.body;
  return a.message.body;
}

/** Short facts: label and value, values as monitored data (hostile: escape them). */
export function factsOf(a: AlertMessage): [string, string][] {
  return [
    ["Rule", a.rule.name],
    ["Severity", a.rule.severity],
    ["Module", a.module],
    ["Event", a.summary],
    ["State", a.state],
    ["First matched", a.fired_at],
    ...(a.occurrences > 1 ? ([["Matches", String(a.occurrences)]] as [string, string][]) : []),
    ...(a.resolution ? ([["Resolution", a.resolution]] as [string, string][]) : []),
  ];
}

/** Cuts to `max` characters, marking the cut. */
export function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
