/**
 * Slack mrkdwn escaping. Slack interprets `<...>` as links, mentions and commands
 * (`<!channel>`, `<@U123>`, `<https://x|text>`) and asks senders to escape exactly three
 * characters, `&` `<` `>`, as HTML entities: then none of those can be formed from
 * monitored data, whatever a certificate's subject says.
 */
export function escapeSlack(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
