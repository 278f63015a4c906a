import { chromium } from "playwright-core";
const b = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--headless", "--no-sandbox"] });
const p = await b.newPage();
const msgs = [];
p.on("console", (m) => { if (m.type() === "error") msgs.push(m.text()); });
await p.route("**/api/docs", async (route) => {
  const r = await route.fetch();
  const h = { ...r.headers() };
  h["content-security-policy"] = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
  await route.fulfill({ response: r, headers: h });
});
await p.goto(process.argv[2]);
await p.waitForTimeout(4000); await p.getByText("Accounts").first().click(); await p.waitForTimeout(1500); await p.getByText("Log in").first().click().catch(()=>{}); await p.waitForTimeout(2000); console.log((await p.locator("body").innerText()).includes("/api/auth/login"));
console.log(msgs.length, msgs.slice(0, 3).join("\n").slice(0, 1500));
await p.screenshot({ path: "/tmp/identity-docs-strict.png" });
await b.close();
