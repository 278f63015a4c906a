/**
 * The notification providers, one folder each. Adding one: its folder (settings,
 * rendering, sending, tests, its local receiver) and one line here. The API's channel
 * schemas, the OpenAPI document and the console's channel form are derived from this
 * list (../schema.ts, GET /api/notification-channels/providers).
 */
import { discord } from "./discord";
import { email } from "./email";
import { msteams } from "./msteams";
import { opsgenie } from "./opsgenie";
import { pagerduty } from "./pagerduty";
import type { ChannelProvider } from "./provider";
import { slack } from "./slack";
import { splunkHec } from "./splunk_hec";
import { webhook } from "./webhook";

export const PROVIDERS = [webhook, slack, email, pagerduty, opsgenie, msteams, discord, splunkHec] as const;

export type ChannelKind = (typeof PROVIDERS)[number]["kind"];

const BY_KIND = new Map<string, ChannelProvider<any>>(PROVIDERS.map((p) => [p.kind, p as ChannelProvider<any>]));

/** The provider of a kind, or undefined for a kind no longer provided. */
export const providerOf = (kind: string): ChannelProvider<any> | undefined => BY_KIND.get(kind);
