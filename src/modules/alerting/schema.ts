import { z } from "@hono/zod-openapi";
import { SEVERITIES } from "./service";
import { ALERT_STATES, ALERT_STATUSES, DELIVERY_ACTIONS, SUPPRESSED_REASONS } from "../../db/schema";
import { limitOffsetQuery, pathId } from "../../platform/paging";
import { refuseUnsafeText, safeMultilineText, safeText } from "../../platform/text";
import { MAX_EXPRESSION_BYTES } from "./cel/engine";

/**
 * A CEL expression: may span lines, and refuses the characters that make text display
 * otherwise than it is stored (a bidi override inside a string literal makes a rule
 * read differently from what it tests: "Trojan Source"). Its length is checked by the
 * compiler (400 `expression_too_long`).
 */
const expression = () => refuseUnsafeText(z.string(), true);

/** The largest example event `POST /alert-rules/test` evaluates (as JSON, UTF-8). */
export const MAX_TEST_EVENT_BYTES = 65_536;

export const RuleBody = z
  .object({
    name: safeText(200),
    expression: expression().openapi({ description: `CEL, at most ${MAX_EXPRESSION_BYTES / 1024} KiB; line breaks and tabs allowed, control and bidirectional characters refused`, example: 'cert.dns_names.exists(n, n.endsWith(".example.com")) && !caa.authorized' }),
    enabled: z.boolean().optional(),
    severity: z.enum(SEVERITIES).optional().openapi({ description: "default medium" }),
    template_id: z.number().int().positive().nullable().optional(),
    channel_ids: z.array(z.number().int().positive()).max(20).optional(),
    throttle_seconds: z.number().int().min(0).max(604_800).optional().openapi({ description: "Fire at most once per this many seconds per subject; 0 = no throttle" }),
  })
  .openapi("AlertRuleInput");
export const Rule = z
  .object({
    id: z.number().int(),
    name: z.string(),
    expression: z.string(),
    enabled: z.boolean(),
    severity: z.string(),
    template_id: z.number().int().nullable(),
    channel_ids: z.array(z.number().int()),
    throttle_seconds: z.number().int(),
    alerts_last_24h: z
      .object({
        fired: z.number().int().openapi({ description: "Matches sent to the rule's channels" }),
        suppressed: z.number().int().openapi({ description: "Matches not sent: duplicates of an alert of the last 24 h, or throttled (see the alert history)" }),
      })
      .openapi({ description: "The rule's matches in the 24 hours before the request" }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("AlertRule");
export const RuleList = z.object({ rules: z.array(Rule) });
export const Created = z.object({ id: z.number().int(), message: z.string() });
export const Message = z.object({ message: z.string() });
export const EnabledBody = z.object({ enabled: z.boolean() });
export const TestBody = z
  .object({
    expression: expression(),
    event: z
      .record(z.string(), z.unknown())
      .superRefine((event, ctx) => {
        // Evaluation time grows with the event; a rule's real events are far smaller.
        const bytes = new TextEncoder().encode(JSON.stringify(event)).length;
        if (bytes > MAX_TEST_EVENT_BYTES) ctx.addIssue({ code: "custom", message: `the example event is ${bytes} bytes as JSON; at most ${MAX_TEST_EVENT_BYTES} are evaluated` });
      })
      .openapi({ description: `An example event of the module, at most ${MAX_TEST_EVENT_BYTES / 1024} KiB as JSON` }),
    rule_id: z.number().int().positive().optional().openapi({ description: "A saved rule of the module: the answer also says whether a real event like this one would be sent now or suppressed (duplicate, throttled) and why" }),
  })
  .openapi("AlertRuleTest");
export const TestResult = z
  .object({
    matched: z.boolean(),
    error: z.string().nullable(),
    outcome: z.enum(["no_match", "error", "would_fire", "would_be_suppressed", "rule_disabled"]).openapi({
      description: "would_be_suppressed and rule_disabled only with rule_id: what a real event like this one would become now under the saved rule",
    }),
    explanation: z.string().openapi({ description: "The outcome in words" }),
    suppression: z
      .object({
        reason: z.enum(SUPPRESSED_REASONS),
        repeats_alert_id: z.number().int().nullable().openapi({ description: "The alert (history id) this match would repeat" }),
        until: z.string().openapi({ description: "Until when the same match stays suppressed" }),
        asset: z.string(),
        subject: z.string(),
      })
      .nullable(),
  })
  .openapi("AlertRuleTestResult");

export const TemplateBody = z
  .object({
    name: safeText(200),
    subject: refuseUnsafeText(z.string().max(1000), false).openapi({ example: "New certificate for {{cert.subject}}" }),
    body: safeMultilineText(20_000).openapi({ example: "Issuer: {{cert.issuer}}\nNames: {{cert.dns_names}}" }),
  })
  .openapi("AlertTemplateInput");
export const Template = TemplateBody.extend({ id: z.number().int(), created_at: z.string(), updated_at: z.string() }).openapi("AlertTemplate");
export const TemplateList = z.object({ templates: z.array(Template) });

export const HistoryQuery = limitOffsetQuery({ defaultLimit: 20, maxLimit: 100 }).extend({
  status: z.enum(ALERT_STATUSES).optional().openapi({ description: "Only sent (fired) or only suppressed matches; default both" }),
  rule_id: z.coerce.number().int().positive().optional().openapi({ description: "Only this rule's" }),
  alert_id: z.coerce.number().int().positive().optional().openapi({ description: "Only this alert (a channel's delivery links to it)" }),
});
export const History = z
  .object({
    alerts: z.array(
      z.object({
        id: z.number().int(),
        rule_id: z.number().int().nullable(),
        rule_name: z.string(),
        severity: z.string(),
        subject: z.string(),
        asset: z.string().openapi({ description: "The monitored thing the event concerns (with the rule and the content: the de-duplication key)" }),
        event_id: z.string(),
        event_summary: z.string(),
        message: z.object({ subject: z.string(), body: z.string() }),
        fired_at: z.string().openapi({ description: "When the rule matched" }),
        status: z.enum(ALERT_STATUSES).openapi({ description: "fired: sent to the rule's channels; suppressed: matched but not sent (suppressed_reason)" }),
        suppressed_reason: z.enum(SUPPRESSED_REASONS).nullable().openapi({
          description: "duplicate: the rule already alerted on the same content for the same asset within 24 h; throttled: within the rule's throttle_seconds for the same subject",
        }),
        repeats_alert_id: z.number().int().nullable().openapi({ description: "The alert a suppressed match repeats" }),
        suppressed_until: z.string().nullable().openapi({ description: "Until when the same match stays suppressed" }),
        alert_key: z.string().openapi({ description: "Stable per rule, asset and subject: a new match while the alert is open updates it; PagerDuty's dedup_key, Opsgenie's alias" }),
        state: z.enum(ALERT_STATES).nullable().openapi({ description: "Sent alerts: open, acknowledged or resolved; null on suppressed matches" }),
        occurrences: z.number().int().openapi({ description: "Matches this alert stands for (a match while it is open updates it)" }),
        last_matched_at: z.string().nullable(),
        acknowledged_at: z.string().nullable(),
        acknowledged_by: z.string().nullable().openapi({ description: "Email of who acknowledged it" }),
        resolved_at: z.string().nullable(),
        resolved_by: z.string().nullable().openapi({ description: "Email of who resolved it, or \"automatic\" when its condition ended" }),
        resolution: z.string().nullable().openapi({ description: "Why it was resolved, in words" }),
        deliveries: z.array(
          z.object({
            channel_id: z.number().int(),
            channel_name: z.string().nullable(),
            channel_kind: z.string().nullable(),
            action: z.enum(DELIVERY_ACTIONS).openapi({ description: "What the channel is told: trigger (opened or updated), acknowledge, resolve" }),
            status: z.enum(["pending", "retrying", "delivered", "failed"]),
            attempts: z.number().int(),
            last_error: z.string().nullable(),
            response_status: z.number().int().nullable(),
            next_attempt_at: z.string().nullable(),
            delivered_at: z.string().nullable(),
            attempt_log: z
              .array(
                z.object({
                  at: z.string(),
                  outcome: z.enum(["delivered", "retrying", "failed"]),
                  status: z.number().int().nullable().openapi({ description: "The receiver's HTTP status, when it answered" }),
                  error_class: z.string().nullable().openapi({ description: "timeout, connect, dns_resolution, http_status, rate_limited, blocked, tls, protocol, internal" }),
                  error: z.string().nullable(),
                  retry_after_seconds: z.number().nullable().openapi({ description: "The wait the receiver asked for (Retry-After, retry_after)" }),
                }),
              )
              .openapi({ description: "Every attempt, oldest first" }),
          }),
        ),
      }),
    ),
    total: z.number().int(),
    limit: z.number().int(),
    offset: z.number().int(),
  })
  .openapi("AlertHistory");

export const Introspection = z
  .object({
    module: z.string(),
    variables: z.array(z.object({ path: z.string(), type: z.string(), description: z.string() })),
    functions: z.array(z.object({ name: z.string(), signature: z.string(), description: z.string() })),
    suggested_rules: z
      .array(z.object({ name: z.string(), expression: z.string(), severity: z.enum(SEVERITIES), description: z.string() }))
      .openapi({ description: "Rules the module offers an organization starting out (create one with POST alert-rules)" }),
  })
  .openapi("CelIntrospection");

export { Channel, ChannelBody, ChannelCreated, ChannelList, ChannelTestResult, ChannelUpdateBody, ProviderList } from "./channels/schema";

export const RuleIdParam = z.object({ rule_id: pathId("rule_id") });
export const AlertIdParam = z.object({ alert_id: pathId("alert_id") });
export const AlertStateChanged = z.object({ message: z.string(), state: z.enum(ALERT_STATES) });
export const TemplateIdParam = z.object({ template_id: pathId("template_id") });
export const ChannelIdParam = z.object({ channel_id: pathId("channel_id") });
