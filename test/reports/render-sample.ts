/**
 * Renders sample reports to look at (not a test):
 *   npx tsx test/reports/render-sample.ts [outDir]   then   pdftoppm -png -r 60 <pdf> <prefix>
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { renderReportPdf } from "../../src/modules/reports/pdf/render";
import { emptyFacts } from "../../src/modules/reports/facts/types";
import { AS_OF, PERIOD, blindFacts, documentOf, moduleCoverage, scenarioFacts } from "./sample";

const out = process.argv[2] ?? "/tmp/trust-plane-report-samples";
mkdirSync(out, { recursive: true });
const t0 = performance.now();
const pdf = await renderReportPdf(documentOf(scenarioFacts()));
console.log(`scenario: ${pdf.length} bytes in ${(performance.now() - t0).toFixed(0)} ms`);
writeFileSync(join(out, "scenario.pdf"), pdf);
for (let i = 0; i < 3; i++) {
  const t = performance.now();
  await renderReportPdf(documentOf(scenarioFacts()));
  console.log(`again: ${(performance.now() - t).toFixed(0)} ms`);
}
// A healthy organization: every module's assets collected, nothing fired.
const healthy = emptyFacts(AS_OF, PERIOD);
healthy.coverage = [moduleCoverage("dns-watcher", 4), moduleCoverage("ct-log", 2), moduleCoverage("cert-watcher", 3), moduleCoverage("rdap", 4)];
writeFileSync(join(out, "healthy.pdf"), await renderReportPdf(documentOf(healthy)));
// The offline organization, as a preview of the week so far.
writeFileSync(join(out, "blind-preview.pdf"), await renderReportPdf({ ...documentOf(blindFacts(), []), preview: true }));
const { largeSample } = await import("./sample");
const big = largeSample(1000);
const tb = performance.now();
const bigPdf = await renderReportPdf(documentOf(big.facts, big.assets, "Example Holdings International Group — Security Operations (EMEA and Americas)"));
console.log(`large: ${bigPdf.length} bytes in ${(performance.now() - tb).toFixed(0)} ms`);
writeFileSync(join(out, "large.pdf"), bigPdf);
