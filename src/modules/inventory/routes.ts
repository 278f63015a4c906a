/**
 * The certificate inventory's endpoints: every name of the organization with its state,
 * one name's deployments and timeline, one certificate. Readable with either module's
 * view permission: the inventory joins CT (ct-log) and deployments (cert-watcher).
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { tenantOf, type AppEnv } from "../../platform/context";
import { defineRoute, json, type Access } from "../../platform/route";
import * as s from "./schema";
import * as inventory from "./service";

const tags = ["Certificate inventory"];
const view: Access = { anyOf: ["ct-log:view_monitoring", "cert-watcher:view_monitoring"] };

export const listHostnames = defineRoute({
  method: "get", path: "/api/inventory/hostnames", tags, summary: "Every name of the organization with its certificate state",
  description:
    "Every name seen in the organization's CT matches or named by its certificate monitors, with its `state`, the newest logged certificate covering it " +
    "(`latest_issued`; a wildcard covers one label), its renewal health (thresholds relative to the certificate's lifetime: due at two thirds, overdue in the last sixth) " +
    "and its readiness for the next CA/Browser Forum maximum (`readiness=not_ready`: the cadence will not fit; `matters_from` says when). " +
    "States are evaluated when a certificate naming the name is published, when one of its targets is scanned, and when a time-driven change is due " +
    "(names due are evaluated before this answer). Filters: `state`, `readiness`, `q` (part of the name).",
  access: view, request: { query: s.HostnamesQuery }, responses: { 200: json(s.HostnamesResponse) },
});
export const getHostname = defineRoute({
  method: "get", path: "/api/inventory/hostnames/{hostname}", tags, summary: "One name: its state, what each target serves, its certificate timeline",
  description:
    "Evaluated at request time. `deployed`: per monitored target, the certificate served at its latest scan, its standing and its CT status " +
    "(`not_logged`, `predates_monitoring`, `not_watched`, `private_ca`). `timeline`: every certificate of the name, newest first, with when it was first seen in CT " +
    "and first and last seen served. 404 when the name is not in the organization's inventory.",
  access: view, request: { params: s.HostnameParam }, responses: { 200: json(s.HostnameDetail) },
});
export const getCertificate = defineRoute({
  method: "get", path: "/api/inventory/certificates/{sha256}", tags, summary: "One certificate: its names, the filters it came from, where it is deployed, its authorization",
  description:
    "By the SHA-256 fingerprint of any of its forms: a CT entry (precertificate or certificate) or the certificate as served. `deployed`: every target that served it, " +
    "first and last seen, and whether it still does. 404 when the organization's inventory has no such certificate.",
  access: view, request: { params: s.Sha256Param }, responses: { 200: json(s.CertificateDetail) },
});

/** Registers the endpoints (what the inventory listens to is connected in src/app.ts `connectModules`). */
export function registerInventory(app: OpenAPIHono<AppEnv>) {
  app.openapi(listHostnames, async (c) => c.json(await inventory.listHostnames(c.env, tenantOf(c), c.req.valid("query"), c.get("now")), 200));
  app.openapi(getHostname, async (c) => c.json(await inventory.hostnameDetail(c.env, tenantOf(c), c.req.valid("param").hostname, c.get("now")), 200));
  app.openapi(getCertificate, async (c) => c.json(await inventory.certificateDetail(tenantOf(c), c.req.valid("param").sha256), 200));
}
