/**
 * Every kind of message the Worker's queue carries, and who handles it (the queue
 * counterpart of src/jobs.ts). See src/platform/queue.ts.
 */
import { QueueRegistry } from "./platform/queue";
import { fanOutPublished, type CtLogPublished } from "./modules/ct-log/fanout";

export const queues = new QueueRegistry();

queues.register<CtLogPublished>("ct-log.published", fanOutPublished);
