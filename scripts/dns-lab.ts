/**
 * `npm run dns-lab`: the local DNS lab of the tests (test/fixtures/dns-lab.ts: BIND
 * authoritative with signed zones, Unbound validating, dnsdist DNS-over-HTTPS) as a
 * standalone counterpart for trying the DNS watcher by hand with `npm start`.
 *
 * Prints the DoH URL to put in .dev.vars (DOH_RESOLVER_URLS) and serves the lab's
 * control endpoints (the ones the tests use, test/fixtures/servers/dns-lab.ts) on
 * 127.0.0.1:$DNS_LAB_PORT (default: a free port), so zones can be created and edited
 * with curl between scheduled runs. Ctrl-C stops every lab process.
 */
import { createServer } from "node:http";
import labControl from "../test/fixtures/servers/dns-lab";

const started = await labControl.start!("");
const dohUrl = String(started.dnsLabDohUrl ?? "");
if (!dohUrl) {
  console.error("the DNS lab did not start (see the message above)");
  process.exit(1);
}

const control = createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  if (!url.pathname.startsWith("/dnslab/")) return void res.writeHead(404).end();
  Promise.resolve(labControl.handle(req, res, url)).catch((err: unknown) => {
    if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
    res.end(String(err));
  });
});
await new Promise<void>((resolve) => control.listen(Number(process.env.DNS_LAB_PORT ?? 0), "127.0.0.1", resolve));
const c = `http://127.0.0.1:${(control.address() as { port: number }).port}/dnslab/__control`;

console.log(`
DNS lab running (BIND + Unbound + dnsdist on 127.0.0.1).

  DoH resolver:  ${dohUrl}
  Put in .dev.vars:
    DOH_RESOLVER_URLS=${dohUrl}
    DNS_CHECK_INTERVAL_SECONDS=0

Zones: example.test (signed), bogus.test (expired signatures), insecure.test (unsigned) are
ready; create or replace your own child zone of test. (records relative to the zone; the
SOA and NS are added; the zone is signed unless mode is insecure):

  curl -s -X POST ${c}/zone -H 'content-type: application/json' -d '{"name":"acme.test","mode":"signed",
    "records":"@ IN A 192.0.2.10\\n@ IN MX 10 mx1\\nmx1 IN A 192.0.2.25\\n@ IN TXT \\"v=spf1 -all\\"\\n_dmarc IN TXT \\"v=DMARC1; p=reject\\""}'

Take the resolver away (SERVFAIL / refused) and back:
  curl -s -X POST ${c}/process -d '{"process":"unbound","action":"stop"}'     (or dnsdist; "action":"start")

Ctrl-C stops the lab.`);

const stop = async () => {
  control.close();
  await labControl.stop?.();
  process.exit(0);
};
process.on("SIGINT", () => void stop());
process.on("SIGTERM", () => void stop());
