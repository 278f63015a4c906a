/**
 * Alerting endpoints (docs/decisions.md#alerting), the same set for every monitoring module M:
 *   /api/M/alert-rules[/{id}] [/test] · /api/M/alert-templates[/{id}] ·
 *   /api/M/alert-history · /api/M/introspection
 * each guarded by M's own permissions (a scope of one module never grants
 * another's), plus the organization-wide /api/notification-channels.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { principalOf, tenantOf, type AppContext, type AppEnv } from "../../platform/context";
import type { Permission } from "../../platform/permissions";
import { body, defineRoute, json } from "../../platform/route";
import { introspect } from "./cel/introspection";
import { MODULE_NAMES, type ModuleName } from "./cel/variables";
import * as channels from "./channels/service";
import { PROVIDER_DESCRIPTIONS } from "./channels/schema";
import { alertStateOf, notifyAlertState } from "./emit";
import * as s from "./schema";
import * as alerting from "./service";

function moduleRoutes(m: ModuleName) {
  const tags = [`Alerting: ${m}`];
  const p = (name: string) => ({ permission: `${m}:${name}` as Permission });
  const rules = `/api/${m}/alert-rules`;
  const templates = `/api/${m}/alert-templates`;
  const audit = (action: string, targetType: string, idParam?: string) => ({ action: `${m}.${action}`, targetType, idParam });
  return {
    listRules: defineRoute({ method: "get", path: rules, tags, summary: `List ${m} alert rules`, access: p("view_alert_rules"), responses: { 200: json(s.RuleList) } }),
    createRule: defineRoute({
      method: "post", path: rules, tags, summary: `Create a ${m} alert rule`,
      description: "The CEL expression is compiled and type-checked against the module's variables (GET introspection); an error is a 400 naming line and column. `in_list(value, lists[\"name\"])` needs a literal name of an existing list.",
      access: p("create_alert_rules"), audit: audit("alert_rule.create", "alert_rule"),
      request: { body: body(s.RuleBody) }, responses: { 201: json(s.Created, "Created") },
    }),
    testRule: defineRoute({
      method: "post", path: `${rules}/test`, tags, summary: "Evaluate an expression against an example event without saving",
      description: "With `rule_id` (a saved rule), the answer also says what a real event like this one would become now under that rule: sent (`would_fire`), `would_be_suppressed` (a duplicate of an alert of the last 24 h for the same asset, or throttled) with the alert it repeats and until when, or `rule_disabled`. Nothing is sent or recorded.",
      access: p("view_alert_rules"), request: { body: body(s.TestBody) }, responses: { 200: json(s.TestResult) },
    }),
    getRule: defineRoute({ method: "get", path: `${rules}/{rule_id}`, tags, summary: "One alert rule", access: p("view_alert_rules"), request: { params: s.RuleIdParam }, responses: { 200: json(s.Rule) } }),
    putRule: defineRoute({
      method: "put", path: `${rules}/{rule_id}`, tags, summary: "Replace an alert rule", access: p("update_alert_rules"),
      audit: audit("alert_rule.update", "alert_rule", "rule_id"), request: { params: s.RuleIdParam, body: body(s.RuleBody) }, responses: { 200: json(s.Message) },
    }),
    patchRule: defineRoute({
      method: "patch", path: `${rules}/{rule_id}`, tags, summary: "Enable or disable an alert rule", access: p("update_alert_rules"),
      audit: audit("alert_rule.toggle", "alert_rule", "rule_id"), request: { params: s.RuleIdParam, body: body(s.EnabledBody) }, responses: { 200: json(s.Message) },
    }),
    deleteRule: defineRoute({
      method: "delete", path: `${rules}/{rule_id}`, tags, summary: "Delete an alert rule", access: p("delete_alert_rules"),
      audit: audit("alert_rule.delete", "alert_rule", "rule_id"), request: { params: s.RuleIdParam }, responses: { 200: json(s.Message) },
    }),
    listTemplates: defineRoute({ method: "get", path: templates, tags, summary: `List ${m} alert templates`, access: p("view_alert_templates"), responses: { 200: json(s.TemplateList) } }),
    createTemplate: defineRoute({
      method: "post", path: templates, tags, summary: "Create a message template ({{field.path}} placeholders)",
      description: "Placeholders must name variables of the module (see introspection); unknown fields are a 400.",
      access: p("create_alert_templates"), audit: audit("alert_template.create", "alert_template"),
      request: { body: body(s.TemplateBody) }, responses: { 201: json(s.Created, "Created") },
    }),
    getTemplate: defineRoute({ method: "get", path: `${templates}/{template_id}`, tags, summary: "One template", access: p("view_alert_templates"), request: { params: s.TemplateIdParam }, responses: { 200: json(s.Template) } }),
    putTemplate: defineRoute({
      method: "put", path: `${templates}/{template_id}`, tags, summary: "Replace a template", access: p("update_alert_templates"),
      audit: audit("alert_template.update", "alert_template", "template_id"), request: { params: s.TemplateIdParam, body: body(s.TemplateBody) }, responses: { 200: json(s.Message) },
    }),
    deleteTemplate: defineRoute({
      method: "delete", path: `${templates}/{template_id}`, tags, summary: "Delete a template (rules using it fall back to the default message)",
      access: p("delete_alert_templates"), audit: audit("alert_template.delete", "alert_template", "template_id"),
      request: { params: s.TemplateIdParam }, responses: { 200: json(s.Message) },
    }),
    history: defineRoute({
      method: "get", path: `/api/${m}/alert-history`, tags, summary: "Alerts, newest first: each match sent (with per-channel delivery status) or suppressed (with why and the alert it repeats)",
      access: p("view_alerts"), request: { query: s.HistoryQuery }, responses: { 200: json(s.History) },
    }),
    acknowledge: defineRoute({
      method: "post", path: `/api/${m}/alert-history/{alert_id}/acknowledge`, tags, summary: "Acknowledge an open alert",
      description: "Records who acknowledged it and tells every channel that was told of the alert (PagerDuty and Opsgenie acknowledge their alert under the same key). 409 when it is not open (any more).",
      access: p("update_alert_rules"), audit: audit("alert.acknowledge", "alert", "alert_id"), request: { params: s.AlertIdParam }, responses: { 200: json(s.AlertStateChanged) },
    }),
    resolve: defineRoute({
      method: "post", path: `/api/${m}/alert-history/{alert_id}/resolve`, tags, summary: "Resolve an open or acknowledged alert",
      description: "Records who resolved it and tells every channel that was told of the alert (PagerDuty resolves, Opsgenie closes, under the same key). A later match opens a new alert. 409 when it is resolved already.",
      access: p("update_alert_rules"), audit: audit("alert.resolve", "alert", "alert_id"), request: { params: s.AlertIdParam }, responses: { 200: json(s.AlertStateChanged) },
    }),
    introspection: defineRoute({
      method: "get", path: `/api/${m}/introspection`, tags, summary: "CEL variable schema and functions of the module",
      access: p("view_alert_rules"), responses: { 200: json(s.Introspection) },
    }),
  };
}

const channelTags = ["Notification channels"];
const manageUsers = { permission: "admin:manage_users" } as const;
export const channelRoutes = {
  list: defineRoute({ method: "get", path: "/api/notification-channels", tags: channelTags, summary: "List channels (secrets never shown)", access: manageUsers, responses: { 200: json(s.ChannelList) } }),
  providers: defineRoute({
    method: "get", path: "/api/notification-channels/providers", tags: channelTags, summary: "The kinds of channel and the settings of each (JSON Schema)",
    description: "What the console builds its channel form from: per provider its label, description and the JSON Schema of its settings (each with a title and description; secrets marked `x-secret` and `writeOnly`, with `x-shown-as`).",
    access: manageUsers, responses: { 200: json(s.ProviderList) },
  }),
  create: defineRoute({
    method: "post", path: "/api/notification-channels", tags: channelTags, summary: "Create a channel of one provider's kind",
    description: "The settings depend on `kind` (see the members of NotificationChannelInput, or GET /api/notification-channels/providers). Secret settings are sealed and never returned. Webhook deliveries are JSON POSTs signed with `X-TrustPlane-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, \"<t>.<body>\")>`; the signing secret is returned once.",
    access: manageUsers, audit: { action: "notification_channel.create", targetType: "notification_channel" },
    request: { body: body(s.ChannelBody) }, responses: { 201: json(s.ChannelCreated, "Created") },
  }),
  get: defineRoute({ method: "get", path: "/api/notification-channels/{channel_id}", tags: channelTags, summary: "One channel", access: manageUsers, request: { params: s.ChannelIdParam }, responses: { 200: json(s.Channel) } }),
  put: defineRoute({
    method: "put", path: "/api/notification-channels/{channel_id}", tags: channelTags, summary: "Replace a channel's settings (secret kept unless given or rotate_secret)",
    access: manageUsers, audit: { action: "notification_channel.update", targetType: "notification_channel", idParam: "channel_id" },
    request: { params: s.ChannelIdParam, body: body(s.ChannelUpdateBody) }, responses: { 200: json(s.ChannelCreated.omit({ id: true })) },
  }),
  delete: defineRoute({
    method: "delete", path: "/api/notification-channels/{channel_id}", tags: channelTags, summary: "Delete a channel",
    access: manageUsers, audit: { action: "notification_channel.delete", targetType: "notification_channel", idParam: "channel_id" },
    request: { params: s.ChannelIdParam }, responses: { 200: json(s.Message) },
  }),
  test: defineRoute({
    method: "post", path: "/api/notification-channels/{channel_id}/test", tags: channelTags, summary: "Send a test notification now",
    access: manageUsers, audit: { action: "notification_channel.test", targetType: "notification_channel", idParam: "channel_id" },
    description: "Answers `delivered: true`, or `delivered: false` with a generic failure class in `error`: `blocked` (the egress policy refuses the destination), `unreachable`, `timeout`, `rejected` (the receiver answered with an error), `misconfigured`. The receiver's own answer is never passed on.",
    request: { params: s.ChannelIdParam }, responses: { 200: json(s.ChannelTestResult) },
  }),
};

export function registerAlertingRoutes(app: OpenAPIHono<AppEnv>) {
  for (const m of MODULE_NAMES) {
    const r = moduleRoutes(m);
    const rulesChanged = (c: AppContext) => notifyAlertState(c.env, tenantOf(c).organizationId, "rules");
    app.openapi(r.listRules, async (c) => c.json({ rules: await alerting.listRules(tenantOf(c), m, c.get("now")) }, 200));
    app.openapi(r.createRule, async (c) => {
      const out = await alerting.createRule(tenantOf(c), m, c.req.valid("json"), c.get("now"));
      await rulesChanged(c);
      return c.json(out, 201);
    });
    app.openapi(r.testRule, async (c) => {
      const b = c.req.valid("json");
      const organizationId = tenantOf(c).organizationId;
      const now = c.get("now").getTime();
      const preview: alerting.PreviewSuppression = (rule, event) => alertStateOf(c.env, organizationId).preview(m, rule, event, now);
      return c.json(await alerting.testRule(tenantOf(c), m, b.expression, b.event, { ruleId: b.rule_id, preview }), 200);
    });
    app.openapi(r.getRule, async (c) => c.json(await alerting.getRule(tenantOf(c), m, c.req.valid("param").rule_id, c.get("now")), 200));
    app.openapi(r.putRule, async (c) => {
      const out = await alerting.replaceRule(tenantOf(c), m, c.req.valid("param").rule_id, c.req.valid("json"), c.get("now"));
      await rulesChanged(c);
      return c.json(out, 200);
    });
    app.openapi(r.patchRule, async (c) => {
      const out = await alerting.setRuleEnabled(tenantOf(c), m, c.req.valid("param").rule_id, c.req.valid("json").enabled, c.get("now"));
      await rulesChanged(c);
      return c.json(out, 200);
    });
    app.openapi(r.deleteRule, async (c) => {
      const out = await alerting.deleteRule(tenantOf(c), m, c.req.valid("param").rule_id);
      await rulesChanged(c);
      return c.json(out, 200);
    });
    app.openapi(r.listTemplates, async (c) => c.json({ templates: await alerting.listTemplates(tenantOf(c), m) }, 200));
    app.openapi(r.createTemplate, async (c) => c.json(await alerting.createTemplate(tenantOf(c), m, c.req.valid("json"), c.get("now")), 201));
    app.openapi(r.getTemplate, async (c) => c.json(await alerting.getTemplate(tenantOf(c), m, c.req.valid("param").template_id), 200));
    app.openapi(r.putTemplate, async (c) => {
      const out = await alerting.replaceTemplate(tenantOf(c), m, c.req.valid("param").template_id, c.req.valid("json"), c.get("now"));
      await rulesChanged(c);
      return c.json(out, 200);
    });
    app.openapi(r.deleteTemplate, async (c) => {
      const out = await alerting.deleteTemplate(tenantOf(c), m, c.req.valid("param").template_id);
      await rulesChanged(c);
      return c.json(out, 200);
    });
    app.openapi(r.history, async (c) => {
      const q = c.req.valid("query");
      return c.json(await alerting.listHistory(tenantOf(c), m, q), 200);
    });
    for (const [route, to] of [[r.acknowledge, "acknowledged"], [r.resolve, "resolved"]] as const) {
      app.openapi(route, async (c) => {
        const t = tenantOf(c);
        const out = await alerting.changeAlertState(t, m, c.req.valid("param").alert_id, to, principalOf(c).userEmail, c.get("now"));
        await alertStateOf(c.env, t.organizationId).wake(t.organizationId);
        return c.json(out, 200);
      });
    }
    app.openapi(r.introspection, async (c) => c.json(introspect(m), 200));
  }

  app.openapi(channelRoutes.list, async (c) => c.json({ channels: await channels.listChannels(tenantOf(c)) }, 200));
  app.openapi(channelRoutes.providers, async (c) => c.json(PROVIDER_DESCRIPTIONS, 200));
  app.openapi(channelRoutes.create, async (c) => c.json(await channels.createChannel(tenantOf(c), c.get("config"), c.req.valid("json") as channels.ChannelInput, c.get("now")), 201));
  app.openapi(channelRoutes.get, async (c) => c.json(channels.channelView(await channels.channelOf(tenantOf(c), c.req.valid("param").channel_id)), 200));
  app.openapi(channelRoutes.put, async (c) =>
    c.json(await channels.updateChannel(tenantOf(c), c.get("config"), c.req.valid("param").channel_id, c.req.valid("json") as channels.ChannelInput, c.get("now")), 200),
  );
  app.openapi(channelRoutes.delete, async (c) => c.json(await channels.deleteChannel(tenantOf(c), c.req.valid("param").channel_id), 200));
  app.openapi(channelRoutes.test, async (c) => {
    const ch = await channels.channelOf(tenantOf(c), c.req.valid("param").channel_id);
    const now = c.get("now");
    const r = await channels.sendToChannel(c.get("db"), c.get("config"), ch, channels.testAlert(c.get("config"), ch, now), now, { test: true });
    // Delivered, or a generic failure class: never the receiver's status line or body.
    return c.json({ delivered: r.ok, error: r.ok ? null : (r.failure ?? "unreachable") }, 200);
  });
}
