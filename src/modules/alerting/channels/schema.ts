/**
 * The channel API's schemas, derived from the registry: the request of each kind is
 * its provider's settings plus name/kind/enabled (one member of a union on `kind`, a
 * component of its own in the OpenAPI document), the update the same with secrets
 * optional (left out: kept), and the provider list the console builds its form from.
 */
import { z } from "@hono/zod-openapi";
import { safeText } from "../../../platform/text";
import { settingMeta, type ChannelProvider } from "./provider";
import { PROVIDERS } from "./registry";

const CHANNEL_KINDS = PROVIDERS.map((p) => p.kind) as [string, ...string[]];

const base = {
  name: safeText(200),
  enabled: z.boolean().optional(),
};

const inputOf = (p: ChannelProvider<any>, update: boolean) => {
  const shape = Object.fromEntries(
    Object.entries(p.settings.shape as Record<string, z.ZodType>).map(([k, s]) => [k, update && settingMeta(s).secret ? s.optional() : s]),
  );
  const component = `NotificationChannel${update ? "Update" : "Input"}_${p.kind}`;
  return z
    .object({ kind: z.literal(p.kind), ...base, ...shape, ...(update ? { rotate_secret: z.boolean().optional().openapi({ description: "Replace a generated secret (the webhook signing secret) with a new one, returned once" }) } : {}) })
    .openapi(component, { description: `${p.label}: ${p.description}` });
};

type Members = [z.ZodObject, ...z.ZodObject[]];

export const ChannelBody = z
  .discriminatedUnion("kind", PROVIDERS.map((p) => inputOf(p, false)) as unknown as Members)
  .openapi("NotificationChannelInput", { description: "A channel of one provider's kind; secret settings are sealed and never returned." });

export const ChannelUpdateBody = z
  .discriminatedUnion("kind", PROVIDERS.map((p) => inputOf(p, true)) as unknown as Members)
  .openapi("NotificationChannelUpdate", { description: "A secret left out, or sent back as it was shown, keeps its sealed value." });

export const Channel = z
  .object({
    id: z.number().int(),
    name: z.string(),
    kind: z.enum(CHANNEL_KINDS),
    enabled: z.boolean(),
    settings: z.record(z.string(), z.unknown()).openapi({ description: "The provider's settings; secrets only in their masked form (x-shown-as), never in full" }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("NotificationChannel");
export const ChannelList = z.object({ channels: z.array(Channel) });
export const ChannelCreated = z.object({ id: z.number().int(), message: z.string(), secret: z.string().optional().openapi({ description: "A generated secret (the webhook signing secret), shown only here" }) });
export const ChannelTestResult = z.object({
  delivered: z.boolean(),
  error: z.enum(["blocked", "unreachable", "timeout", "rejected", "misconfigured"]).nullable().openapi({ description: "Failure class when not delivered" }),
});

export const ProviderList = z
  .object({
    providers: z.array(
      z.object({
        kind: z.enum(CHANNEL_KINDS),
        label: z.string(),
        description: z.string(),
        settings_schema: z.record(z.string(), z.unknown()).openapi({
          description: "JSON Schema of the provider's settings: title and description per setting, `x-secret`/`writeOnly` on secrets with `x-shown-as`",
        }),
      }),
    ),
  })
  .openapi("NotificationProviders");

/** The provider list as served (computed once). */
export const PROVIDER_DESCRIPTIONS = {
  providers: PROVIDERS.map((p) => ({
    kind: p.kind,
    label: p.label,
    description: p.description,
    settings_schema: z.toJSONSchema(p.settings, { io: "input", unrepresentable: "any" }) as Record<string, unknown>,
  })),
};
