/**
 * The ingest Worker (wrangler.ingest.toml): hosts the CtLogCursor Durable Objects and
 * nothing else. The API Worker pokes them through its CT_LOG_CURSOR binding (with
 * script_name pointing here); they reach D1 and the event queue through their
 * CT_CURSOR_DATA service binding to the API Worker (src/ct-cursor-data.ts).
 *
 * Why a Worker of its own: reading a log's backlog is CPU-bound work (thousands of
 * certificates a second to parse, hash and match). On Cloudflare each Durable Object
 * runs apart from the isolates serving requests anyway; locally, workerd runs every
 * isolate of one process on one thread, so `npm start` runs this Worker in its own
 * workerd process and the API keeps its latency while a backlog is read.
 */
export { CtLogCursor } from "../durable-objects/ct-log-cursor";

export default {
  fetch: () => new Response(null, { status: 404 }),
} satisfies ExportedHandler;
