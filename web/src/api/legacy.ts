/**
 * The untyped calls of the pages not yet moved to the typed client (index.ts): each
 * caller names the type it expects, unchecked. Being removed page by page; new code
 * uses index.ts.
 */
import { ApiError, consoleFetch, unauthorized } from "./index";

export type Query = Record<string, string | number | boolean | undefined | null>;

export function withQuery(path: string, query?: Query): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== "") params.set(k, String(v));
  const s = params.toString();
  return s ? `${path}${path.includes("?") ? "&" : "?"}${s}` : path;
}

interface CallOptions {
  query?: Query;
  body?: unknown;
  /** A bearer instead of the cookie (API token renewal is authenticated with the token itself). */
  bearer?: string;
  /** Do not redirect to the login page on 401 (login form, probes). */
  allowUnauthorized?: boolean;
}

export async function api<T = any>(method: string, path: string, opts: CallOptions = {}): Promise<T> {
  const headers: Record<string, string> = { "X-TrustPlane-Console": "1", accept: "application/json" };
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  if (opts.bearer) headers.authorization = `Bearer ${opts.bearer}`;
  let res: Response;
  try {
    res = await consoleFetch(
      new Request(new URL(withQuery(path, opts.query), window.location.origin), {
        method,
        headers,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        credentials: "same-origin",
      }),
    );
  } catch {
    throw new ApiError(0, "network_error", "The service cannot be reached. Check your connection and try again.");
  }
  const text = await res.text();
  let parsed: any = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (res.ok) return parsed as T;
  const err = parsed?.error;
  const error = new ApiError(
    res.status,
    typeof err?.code === "string" ? err.code : `http_${res.status}`,
    typeof err?.message === "string" ? err.message : `The service answered ${res.status} ${res.statusText}`.trim(),
    Array.isArray(err?.details) ? err.details : [],
  );
  if (res.status === 401 && !opts.allowUnauthorized) unauthorized();
  if (res.status === 429) {
    const after = res.headers.get("retry-after");
    if (after) error.message = `${error.message} (retry in ${after} s)`;
  }
  return Promise.reject(error);
}

export const get = <T = any>(path: string, query?: Query, opts: Omit<CallOptions, "query"> = {}): Promise<T> => {
  return api<T>("GET", withQuery(path, query), opts);
};
export const post = <T = any>(path: string, body?: unknown, opts: CallOptions = {}) => api<T>("POST", path, { ...opts, body: body ?? {} });
export const put = <T = any>(path: string, body: unknown) => api<T>("PUT", path, { body });
export const patch = <T = any>(path: string, body: unknown) => api<T>("PATCH", path, { body });
export const del = <T = any>(path: string, body?: unknown) => api<T>("DELETE", path, body === undefined ? {} : { body });

