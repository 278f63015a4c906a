/**
 * The console's one way to call the API. Same origin, session in the HttpOnly
 * cookie (the console never sees the token), `X-TrustPlane-Console: 1` on every
 * call (the cookie session needs it on mutations: CSRF), errors as `ApiError`
 * carrying the error body's `details` so forms can put each message by its field.
 * A 401 sends the user to the login page.
 */

export interface ErrorDetail {
  path: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: ErrorDetail[] = [],
  ) {
    super(message);
  }
}

type UnauthorizedHandler = () => void;
let onUnauthorized: UnauthorizedHandler = () => {};

/** The app shell decides what a 401 does (back to the login page). */
export function setUnauthorizedHandler(handler: UnauthorizedHandler) {
  onUnauthorized = handler;
}

export type Query = Record<string, string | number | boolean | undefined | null>;

export function withQuery(path: string, query?: Query): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== "") params.set(k, String(v));
  const s = params.toString();
  return s ? `${path}${path.includes("?") ? "&" : "?"}${s}` : path;
}

export interface CallOptions {
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
    res = await fetch(withQuery(path, opts.query), {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      credentials: "same-origin",
    });
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
  if (res.status === 401 && !opts.allowUnauthorized) onUnauthorized();
  if (res.status === 429) {
    const after = res.headers.get("retry-after");
    if (after) error.message = `${error.message} (retry in ${after} s)`;
  }
  return Promise.reject(error);
}

const prefetched = new Map<string, Promise<unknown>>();

/**
 * Starts a GET before the page that needs it is rendered (the overview's data while
 * the session is still being checked): the first `get` of the same URL takes it.
 */
export function prefetch(path: string, query?: Query) {
  const url = withQuery(path, query);
  const p = api("GET", url, { allowUnauthorized: true });
  p.catch(() => undefined);
  prefetched.set(url, p);
}

export const get = <T = any>(path: string, query?: Query, opts: Omit<CallOptions, "query"> = {}): Promise<T> => {
  const url = withQuery(path, query);
  const early = prefetched.get(url);
  if (early && !opts.bearer) {
    prefetched.delete(url);
    return early as Promise<T>;
  }
  return api<T>("GET", url, opts);
};
export const post = <T = any>(path: string, body?: unknown, opts: CallOptions = {}) => api<T>("POST", path, { ...opts, body: body ?? {} });
export const put = <T = any>(path: string, body: unknown) => api<T>("PUT", path, { body });
export const patch = <T = any>(path: string, body: unknown) => api<T>("PATCH", path, { body });
export const del = <T = any>(path: string, body?: unknown) => api<T>("DELETE", path, body === undefined ? {} : { body });

/** True when the endpoint does not exist on this deployment (a module not shipped yet). */
export function isMissingEndpoint(e: unknown): boolean {
  return e instanceof ApiError && e.status === 404 && /no such endpoint/i.test(e.message);
}
