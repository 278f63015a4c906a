/** How secret settings are shown back; providers declare which per setting (provider.ts `secretSetting`). */

/** How a secret setting is shown back: `url` scheme, host and port; `origin` the origin; `last4` its last four characters; `hidden` not at all. */
export type ShownAs = "url" | "origin" | "last4" | "hidden";

/**
 * A URL for display: scheme, host and port only. Everything else may be a credential:
 * userinfo, query values, and the path too (Discord, Teams and Slack-style webhooks
 * carry their secret as `/webhooks/<id>/<token>`), so anything after the host is
 * shown as `/***`.
 */
export function redactUrl(url: string): string {
  const u = new URL(url);
  const hidden = u.username !== "" || u.password !== "" || u.pathname !== "/" || u.search !== "" || u.hash !== "";
  return `${u.protocol}//${u.host}/${hidden ? "***" : ""}`;
}

/** A secret as shown: null when it is not shown at all. */
export function maskSecret(kind: ShownAs, value: string): string | null {
  try {
    switch (kind) {
      case "url":
        return redactUrl(value);
      case "origin":
        return `${new URL(value).origin}/…`;
      case "last4":
        return value.length > 8 ? `…${value.slice(-4)}` : "…";
      case "hidden":
        return null;
    }
  } catch {
    return "***";
  }
}
