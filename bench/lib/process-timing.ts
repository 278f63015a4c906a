/**
 * Whole-process wall time of commands, measured from outside like a user experiences it:
 * spawn, wait for exit, clock. Two commands are run in turn (A B A B ...) after warm-up
 * runs, so a machine whose speed drifts during the run affects both alike; the figure to
 * quote is the median, and the comparison is the median of the per-pair ratios A/B.
 */
import { spawn } from "node:child_process";

export interface Command {
  name: string;
  argv: string[];
}

export interface Timing {
  name: string;
  ms: number[];
  median: number;
  min: number;
  max: number;
  /** Exit codes seen (a benchmark of a failing command says so). */
  exitCodes: number[];
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** One run: wall milliseconds from spawn to exit; output is read and dropped. */
export function timeOnce(argv: string[], cwd?: string): Promise<{ ms: number; code: number }> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(argv[0], argv.slice(1), { cwd, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.resume();
    child.stderr.resume();
    child.once("error", reject);
    child.once("close", (code) => resolve({ ms: Number(process.hrtime.bigint() - t0) / 1e6, code: code ?? -1 }));
  });
}

function summary(name: string, ms: number[], exitCodes: number[]): Timing {
  return { name, ms, median: median(ms), min: Math.min(...ms), max: Math.max(...ms), exitCodes: [...new Set(exitCodes)] };
}

/** A and B alternately, `runs` counted pairs after `warmup` uncounted ones. */
export async function compare(a: Command, b: Command, opts: { runs: number; warmup: number; cwd?: string }) {
  const am: number[] = [], bm: number[] = [], ac: number[] = [], bc: number[] = [], ratios: number[] = [];
  for (let i = 0; i < opts.warmup + opts.runs; i++) {
    const x = await timeOnce(a.argv, opts.cwd);
    const y = await timeOnce(b.argv, opts.cwd);
    if (i < opts.warmup) continue;
    am.push(x.ms); ac.push(x.code);
    bm.push(y.ms); bc.push(y.code);
    ratios.push(x.ms / y.ms);
  }
  return { a: summary(a.name, am, ac), b: summary(b.name, bm, bc), ratio: median(ratios), ratioMin: Math.min(...ratios), ratioMax: Math.max(...ratios) };
}

export const fmt = (ms: number) => ms.toFixed(0);
export const fmtRatio = (r: number) => r.toFixed(2);
