/**
 * A small history router: the current path and query as a hook, `navigate()`, and
 * a click handler for same-origin links so the page is not reloaded. Routes are
 * matched in main.tsx with `match()`.
 */
import { useEffect, useState } from "preact/hooks";

export interface Location {
  path: string;
  query: URLSearchParams;
}

/** A query parameter as an id (a positive integer), undefined when absent or not one. */
export const queryId = (query: URLSearchParams, name: string): number | undefined => {
  const v = query.get(name) ?? "";
  return /^[1-9]\d{0,15}$/.test(v) ? Number(v) : undefined;
};

/** A query parameter that must be one of `allowed`, undefined otherwise. */
export function queryChoice<T extends string>(query: URLSearchParams, name: string, allowed: readonly T[]): T | undefined {
  const v = query.get(name);
  return allowed.find((a) => a === v);
}

const listeners = new Set<() => void>();

function current(): Location {
  return { path: window.location.pathname, query: new URLSearchParams(window.location.search) };
}

export function navigate(to: string, opts: { replace?: boolean } = {}) {
  if (to === window.location.pathname + window.location.search) return;
  if (opts.replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  for (const l of listeners) l();
  requestAnimationFrame(() => window.scrollTo(0, 0));
  focusHeading(++navigations, document.activeElement, 40);
}

let navigations = 0;

/**
 * A new page: move focus to its main heading for screen-reader and keyboard users.
 * A page opened for the first time loads its own chunk first, so its heading may come
 * a little later: look again every 50 ms for up to `tries` times, unless another
 * navigation started or the user has moved focus meanwhile.
 */
function focusHeading(navigation: number, from: Element | null, tries: number) {
  requestAnimationFrame(() => {
    // The link that was clicked may be gone with the old page (focus on body): that is not the user moving on.
    const at = document.activeElement;
    if (navigation !== navigations || (at !== from && at !== document.body && at !== null)) return;
    const h = document.querySelector<HTMLElement>("main h1");
    if (h) {
      h.tabIndex = -1;
      h.focus({ preventScroll: true });
    } else if (tries > 0) {
      setTimeout(() => focusHeading(navigation, from, tries - 1), 50);
    }
  });
}

/** Replace one query parameter of the current URL (tabs, filters). */
export function setQuery(updates: Record<string, string | number | null | undefined>, opts: { replace?: boolean } = {}) {
  const q = new URLSearchParams(window.location.search);
  for (const [k, v] of Object.entries(updates)) {
    if (v === null || v === undefined || v === "") q.delete(k);
    else q.set(k, String(v));
  }
  const s = q.toString();
  const to = window.location.pathname + (s ? `?${s}` : "");
  if (opts.replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  for (const l of listeners) l();
}

export function useLocation(): Location {
  const [loc, setLoc] = useState(current);
  useEffect(() => {
    const update = () => setLoc(current());
    listeners.add(update);
    window.addEventListener("popstate", update);
    return () => {
      listeners.delete(update);
      window.removeEventListener("popstate", update);
    };
  }, []);
  return loc;
}

/** Intercepts clicks on same-origin <a href> inside the app (not downloads, not new tabs). */
export function interceptLinks(root: HTMLElement) {
  root.addEventListener("click", (ev) => {
    if (ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
    const a = (ev.target as HTMLElement).closest("a");
    if (!a || a.target || a.hasAttribute("download") || a.origin !== window.location.origin) return;
    if (a.pathname.startsWith("/api/") || a.pathname.startsWith("/vendor/")) return;
    // A link within this page (#fragment): the browser's own scrolling and focus.
    if (a.hash && a.pathname === window.location.pathname && a.search === window.location.search) return;
    ev.preventDefault();
    navigate(a.pathname + a.search);
  });
}

/** `/rdap/:domain` against `/rdap/example.com` -> {domain: "example.com"}; null if no match. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const p = pattern.split("/").filter(Boolean);
  const s = path.split("/").filter(Boolean);
  if (p.length !== s.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    if (p[i].startsWith(":")) params[p[i].slice(1)] = decodeURIComponent(s[i]);
    else if (p[i] !== s[i]) return null;
  }
  return params;
}
