/**
 * Collection state of a monitored asset (the API's `collection` object, OpenAPI
 * component `Collection`): whether the service could look, since when it cannot, why,
 * and when it tries again. Every page that shows an asset's data shows this beside it,
 * so a value that was never observed is never read as a finding.
 *
 *   <CollectionBadge collection={c} />    a cell: state, since when, the reason in a line
 *   <CollectionDetail collection={c} />   a detail block: every field in words
 */
import type { ComponentChildren } from "preact";
import type { Schemas } from "../api";
import { Time } from "./time";
import { Badge, KeyValues } from "./widgets";

export type Collection = Schemas["Collection"];
export type CollectionState = Collection["state"];
export type CollectionErrorClass = NonNullable<Schemas["CollectionError"]>["class"];

const STATE_LABEL: Record<CollectionState, string> = { ok: "collected", failing: "failing", pending: "not collected yet", paused: "paused" };
const STATE_TONE: Record<CollectionState, string> = { ok: "good", failing: "bad", pending: "neutral", paused: "neutral" };

/** The error classes in words, for people (the API keeps the codes). */
export const ERROR_CLASS_LABEL: Record<CollectionErrorClass, string> = {
  dns_resolution: "name did not resolve",
  connect: "no connection",
  timeout: "timed out",
  tls: "TLS failed",
  http_status: "HTTP error",
  rate_limited: "rate limited",
  protocol: "unusable answer",
  blocked: "blocked by egress policy",
  internal: "internal fault",
};

/** The state in a badge: its word says it, the colour repeats it. */
export function CollectionStateBadge({ collection }: { collection: Collection }) {
  return <Badge value={collection.state} tone={STATE_TONE[collection.state]} label={STATE_LABEL[collection.state]} />;
}

/** One sentence: what the state means for this asset now (for titles, summaries, tests). */
export function collectionSentence(c: Collection): string {
  const error = c.error ? `${c.error.message}` : "";
  switch (c.state) {
    case "failing":
      return `Collection failing since ${c.failing_since ?? "?"}${error ? `: ${error}` : ""}`;
    case "pending":
      return c.error ? `Not collected yet: the first attempt failed: ${error}` : "Not collected yet";
    case "paused":
      return "Paused: nothing is collected while disabled";
    case "ok":
      return c.error ? `Collected; the latest attempt failed: ${error}` : "Collected";
  }
}

/**
 * For a table cell: the state, and when it is not plainly "collected", since when and
 * why in one short line (the full message is the cell's text, not a hover).
 */
export function CollectionBadge({ collection: c }: { collection: Collection | null | undefined }) {
  if (!c) return <span class="muted">—</span>;
  return (
    <span class="collection" data-collection-state={c.state}>
      <CollectionStateBadge collection={c} />{" "}
      {c.state === "failing" && (
        <span class="small">
          since <Time iso={c.failing_since} />
        </span>
      )}
      {c.state === "ok" && c.last_success_at && (
        <span class="small muted">
          <Time iso={c.last_success_at} />
        </span>
      )}
      {c.error && c.state !== "paused" && (
        <span class="small collection-error">
          {" "}
          {c.state === "ok" ? "latest attempt failed: " : c.state === "pending" ? "first attempt failed: " : ""}
          {c.error.message}
        </span>
      )}
      {c.state === "pending" && !c.error && (
        <span class="small muted">{c.next_attempt_at ? <> first attempt <Time iso={c.next_attempt_at} /></> : " at the next scheduled run"}</span>
      )}
    </span>
  );
}

/** Every field of the collection state in words, for a detail page. `what` names the source ("DNS lookups", "RDAP lookups"). */
export function CollectionDetail({ collection: c, what }: { collection: Collection; what: string }) {
  return (
    <KeyValues
      items={[
        ["State", <CollectionStateBadge collection={c} />],
        ["Last attempt", <Time iso={c.last_attempt_at} />],
        ["Last collected", c.last_success_at ? <Time iso={c.last_success_at} /> : <span class="muted">never</span>],
        ...(c.failing_since
          ? ([[`${what} failing since`, <><Time iso={c.failing_since} /> <span class="small muted">({c.consecutive_failures} failed attempt{c.consecutive_failures === 1 ? "" : "s"} in a row)</span></>]] as [string, ComponentChildren][])
          : []),
        ...(c.error ? ([["Reason", <><Badge value={c.error.class} tone="bad" label={ERROR_CLASS_LABEL[c.error.class]} /> <span>{c.error.message}</span></>]] as [string, ComponentChildren][]) : []),
        ["Next attempt", c.state === "paused" ? <span class="muted">none while paused</span> : c.next_attempt_at ? <Time iso={c.next_attempt_at} /> : <span class="muted">at the next scheduled run</span>],
      ]}
    />
  );
}
