/** How loud each DNSSEC status and each run's outcome is shown (every value of the API: a new one fails the type check here). */
import type { Schemas } from "../../api";

export const DNSSEC_TONE: Record<Schemas["DnsDomain"]["dnssec_status"], string> = { validated: "good", insecure: "neutral", bogus: "bad", unknown: "neutral" };
export const CHECK_TONE: Record<NonNullable<Schemas["DnsDomain"]["last_check_status"]>, string> = { ok: "good", partial: "warn", error: "bad" };
