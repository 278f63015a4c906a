/**
 * The providers' local receivers (test/fixtures/servers/providers.ts and webhook.ts, each
 * following its provider's documented contract) in a process of their own, for
 * bench:delivery: sender and receivers sharing one event loop would measure each other.
 * Prints `{"url": ...}` on its first line once listening.
 */
import { createServer } from "node:http";
import providersReceiver from "../../test/fixtures/servers/providers";
import webhookReceiver from "../../test/fixtures/servers/webhook";

const receivers = [providersReceiver, webhookReceiver];
await providersReceiver.start?.("");
const http = createServer(async (req, res) => {
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  const r = receivers.find((x) => url.pathname.startsWith(`${x.prefix}/`));
  if (r) await r.handle(req, res, url);
  else res.writeHead(404).end();
});
// Longer than any pause between delivery runs: a connection the sender reuses is never closed under it.
http.keepAliveTimeout = 120_000;
http.headersTimeout = 125_000;
await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
console.log(JSON.stringify({ url: `http://127.0.0.1:${(http.address() as { port: number }).port}` }));
