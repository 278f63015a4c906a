/**
 * The lease/results protocol between an agent and the API (docs/decisions.md#certificate-monitors-and-scanner-agents):
 *
 *   POST /api/cert-watcher/agents/lease    Bearer tpa_...  LeaseRequest  -> LeaseResponse
 *   POST /api/cert-watcher/agents/results  Bearer tpa_...  PostResultRequest -> PostResultResponse
 *                                                          (409: a result was already accepted: done)
 */
import { z } from "zod";
import { ScanResult } from "./scan-result";
import { STARTTLS_PROTOCOLS } from "./vocabulary";

const id = (description: string) => z.number().int().positive().describe(description);

export const LeaseRequest = z.object({
  max_jobs: z.number().int().min(1).max(100).default(10).describe("Jobs wanted at most (1-100)"),
});

export const LeasedJob = z.object({
  job_id: id("The scan job; post its result with this id"),
  monitor_id: id("The certificate monitor"),
  target_id: id("The IP target of the monitor"),
  monitor_cn: z.string().describe("The monitor's cn: the hostname expected on the certificate"),
  ip_address: z.string().describe("Address to connect to"),
  port: z.number().int().min(1).max(65535).describe("TCP port"),
  sni: z.string().describe("Server name to send: the monitor's target_dns, or its cn"),
  starttls: z.enum(STARTTLS_PROTOCOLS).nullable().describe("STARTTLS dialect to speak first, or null for direct TLS"),
  root_ca: z.string().nullable().describe("PEM trust anchor(s) replacing the system store, or null"),
  attempt: z.number().int().positive().describe("1 on the first lease; higher when an earlier lease expired"),
});

export const LeaseResponse = z.object({
  jobs: z.array(LeasedJob),
  lease_seconds: z.number().int().describe("How long the jobs stay with this agent; an unanswered job is then handed out again"),
});

export const PostResultRequest = z.object({
  job_id: z.union([z.number().int().positive(), z.string().regex(/^[1-9]\d{0,15}$/).transform(Number)]).describe("The leased job"),
  result: ScanResult,
});

export const PostResultResponse = z.object({
  accepted: z.literal(true),
  job_id: z.number().int(),
  scan_id: z.number().int(),
  alerts_fired: z.number().int().describe("Alert rules that fired on this scan's event"),
});

export type LeaseRequest = z.input<typeof LeaseRequest>;
export type LeasedJob = z.output<typeof LeasedJob>;
export type LeaseResponse = z.output<typeof LeaseResponse>;
export type PostResultRequest = z.input<typeof PostResultRequest>;
export type PostResultResponse = z.output<typeof PostResultResponse>;
