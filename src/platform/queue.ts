/**
 * Work handed off through the Worker's Cloudflare Queue (binding EVENTS_QUEUE; the
 * same Worker consumes it, see wrangler.toml): what must leave a hot path, such as
 * the alert evaluation of what a CT log cursor just published.
 *
 * A message is a small JSON object with a `type`; modules register one handler per
 * type (src/queues.ts lists them). A consumer batch is split by type and each handler
 * gets all its messages at once (so it can group them, e.g. per organization). A
 * handler that throws has its messages retried by the queue (with backoff, then the
 * dead-letter queue): handlers must be idempotent.
 */
import type { Bindings } from "../env";
import type { Db } from "../db/client";

export interface QueuedMessage {
  type: string;
}

declare module "../env" {
  interface Bindings {
    /** Work handed off hot paths; this Worker consumes it too (wrangler.toml). */
    EVENTS_QUEUE: Queue<QueuedMessage>;
  }
}

export interface QueueContext {
  env: Bindings;
  db: Db;
  now: Date;
}

export type QueueHandler<M extends QueuedMessage = QueuedMessage> = (messages: M[], ctx: QueueContext) => Promise<void>;

/** Seconds before a failed message is delivered again: grows with its attempts. */
export const retryDelaySeconds = (attempts: number) => Math.min(300, 5 * 2 ** Math.max(0, attempts - 1));

export class QueueRegistry {
  private readonly handlers = new Map<string, QueueHandler>();

  register<M extends QueuedMessage>(type: M["type"], handler: QueueHandler<M>): void {
    if (this.handlers.has(type)) throw new Error(`queue message type ${type} registered twice`);
    this.handlers.set(type, handler as unknown as QueueHandler);
  }

  async dispatch(batch: MessageBatch<unknown>, ctx: QueueContext): Promise<void> {
    const byType = new Map<string, Message<unknown>[]>();
    for (const m of batch.messages) {
      const body = m.body as Partial<QueuedMessage> | null;
      const type = typeof body?.type === "string" ? body.type : "";
      byType.set(type, [...(byType.get(type) ?? []), m]);
    }
    await Promise.all(
      [...byType].map(async ([type, messages]) => {
        const handler = this.handlers.get(type);
        if (!handler) {
          // Nothing will ever handle it: retrying would only fill the dead-letter queue later.
          console.error(`queue: no handler for message type "${type}"; ${messages.length} dropped`);
          for (const m of messages) m.ack();
          return;
        }
        try {
          await handler(messages.map((m) => m.body as QueuedMessage), ctx);
          for (const m of messages) m.ack();
        } catch (err) {
          console.error(`queue: ${type} failed for ${messages.length} message(s), retried: ${String(err)}`);
          for (const m of messages) m.retry({ delaySeconds: retryDelaySeconds(m.attempts) });
        }
      }),
    );
  }
}
