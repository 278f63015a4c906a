/**
 * The console's shell: who is logged in, the navigation, and which page a path shows.
 * Public pages (login, signup, invitation) work without a session; every other path
 * sends an anonymous visitor to the login page and back afterwards.
 */
import { render, type ComponentChildren } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";
import "./styles.css";
import { ApiError, get, post, prefetch, setUnauthorizedHandler } from "./api";
import { interceptLinks, match, navigate, useLocation } from "./router";
import { SessionContext, sessionOf, useSession, type Me, type Session } from "./session";
import { AcceptInvitationPage, LoginPage, SignupPage } from "./pages/auth";
import { OVERVIEW_URL, OverviewPage, REPORTS_QUERY, REPORTS_URL } from "./pages/overview";
import { ErrorBox } from "./ui/widgets";
import { lazy } from "./ui/lazy";
import { setUtcTimes, useUtcTimes } from "./ui/time";

// The overview ships with the first page; every other page is its own chunk, loaded
// when first opened (the first page stays small).
const CtPage = lazy(() => import("./pages/ct"), "CtPage");
const CtMatchPage = lazy(() => import("./pages/ct"), "CtMatchPage");
const TyposquatMatchPage = lazy(() => import("./pages/ct"), "TyposquatMatchPage");
const LookalikesPage = lazy(() => import("./pages/lookalikes"), "LookalikesPage");
const LookalikePage = lazy(() => import("./pages/lookalikes"), "LookalikePage");
const DnsPage = lazy(() => import("./pages/dns"), "DnsPage");
const DnsDomainPage = lazy(() => import("./pages/dns"), "DnsDomainPage");
const RdapPage = lazy(() => import("./pages/rdap"), "RdapPage");
const RdapDomainPage = lazy(() => import("./pages/rdap"), "RdapDomainPage");
const CertsPage = lazy(() => import("./pages/certs"), "CertsPage");
const InventoryPage = lazy(() => import("./pages/inventory"), "InventoryPage");
const InventoryHostnamePage = lazy(() => import("./pages/inventory"), "InventoryHostnamePage");
const CertMonitorPage = lazy(() => import("./pages/certs"), "CertMonitorPage");
const AlertingPage = lazy(() => import("./pages/alerting"), "AlertingPage");
const AdminPage = lazy(() => import("./pages/admin"), "AdminPage");
const AccountPage = lazy(() => import("./pages/account"), "AccountPage");
const EnrollmentPage = lazy(() => import("./pages/account"), "SecurityTab");
const ReportsPage = lazy(() => import("./pages/reports"), "ReportsPage");

const PUBLIC_PATHS = ["/login", "/signup", "/accept-invitation"];

interface NavItem {
  href: string;
  label: string;
  visible: (s: Session) => boolean;
}

const NAV: NavItem[] = [
  { href: "/", label: "Overview", visible: () => true },
  { href: "/ct", label: "Certificate Transparency", visible: (s) => s.can("ct-log:view_monitoring") },
  { href: "/lookalikes", label: "Lookalike domains", visible: (s) => s.can("ct-log:view_monitoring") },
  { href: "/dns", label: "DNS", visible: (s) => s.can("dns-watcher:view_monitoring") },
  { href: "/rdap", label: "RDAP", visible: (s) => s.can("rdap:view_monitoring") },
  { href: "/certificates", label: "Certificates", visible: (s) => s.can("cert-watcher:view_monitoring") },
  { href: "/inventory", label: "Inventory", visible: (s) => s.can("ct-log:view_monitoring") || s.can("cert-watcher:view_monitoring") },
  {
    href: "/alerting",
    label: "Alerting",
    visible: (s) => s.me.permissions.some((p) => /:(view_alert_rules|view_alerts|view_alert_templates|view_lists)$/.test(p)) || s.can("admin:manage_users"),
  },
  { href: "/reports", label: "Reports", visible: () => true },
  {
    href: "/admin",
    label: "Administration",
    visible: (s) => s.me.permissions.some((p) => p.startsWith("admin:") || p.startsWith("api-tokens:")),
  },
];

function Route({ path }: { path: string }): ComponentChildren {
  let m: Record<string, string> | null;
  if (path === "/" || path === "/overview") return <OverviewPage />;
  if (path === "/ct") return <CtPage />;
  if ((m = match("/ct/matches/:sha256", path))) return <CtMatchPage sha256={m.sha256} />;
  if ((m = match("/ct/typosquatting/:sha256", path))) return <TyposquatMatchPage sha256={m.sha256} />;
  if (path === "/lookalikes") return <LookalikesPage />;
  if ((m = match("/lookalikes/:id", path))) return <LookalikePage id={m.id} />;
  if (path === "/dns") return <DnsPage />;
  if ((m = match("/dns/:id", path))) return <DnsDomainPage id={m.id} />;
  if (path === "/rdap") return <RdapPage />;
  if ((m = match("/rdap/:domain", path))) return <RdapDomainPage domain={m.domain} />;
  if (path === "/certificates") return <CertsPage />;
  if ((m = match("/certificates/:id", path))) return <CertMonitorPage id={m.id} />;
  if (path === "/inventory") return <InventoryPage />;
  if ((m = match("/inventory/:hostname", path))) return <InventoryHostnamePage hostname={m.hostname} />;
  if (path === "/alerting") return <AlertingPage />;
  if (path === "/reports") return <ReportsPage />;
  if (path === "/admin") return <AdminPage />;
  if (path === "/account") return <AccountPage />;
  return (
    <div>
      <h1>Page not found</h1>
      <p>
        There is no page at <code>{path}</code>. <a href="/">Go to the overview</a>.
      </p>
    </div>
  );
}

function Shell({ children, path }: { children: ComponentChildren; path: string }) {
  const session = useSession();
  const [menuOpen, setMenuOpen] = useState(false);
  const [logoutError, setLogoutError] = useState<ApiError>();
  const utcTimes = useUtcTimes();
  useEffect(() => setMenuOpen(false), [path]);
  const section = "/" + (path.split("/")[1] ?? "");
  return (
    <div class="shell">
      <a
        class="skip"
        href="#main"
        onClick={(e) => {
          // Handled here, not by the router's link interception (which would treat #main as
          // this same page and do nothing): focus goes to the content, Tab continues from there.
          e.preventDefault();
          const main = document.getElementById("main");
          main?.focus();
          main?.scrollIntoView();
        }}
      >
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="/">
          <span aria-hidden="true" class="logo">
            ◆
          </span>{" "}
          Trust-Plane
        </a>
        <span class="org" title={`Organization on the ${session.me.organization.tier} tier`}>
          {session.me.organization.name}
        </span>
        <button type="button" class="menu-toggle" aria-expanded={menuOpen ? "true" : "false"} aria-controls="nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <div class="user">
          <a class="email" href="/account" title="Your account: second factors, password, sessions">
            {session.me.user.email}
          </a>
          {/* The UTC value of a time is its hover title; this switch makes it reachable by keyboard and touch. */}
          <button type="button" aria-pressed={utcTimes ? "true" : "false"} title="Show every time in UTC instead of your local time" onClick={() => setUtcTimes(!utcTimes)}>
            UTC times
          </button>
          <button
            type="button"
            onClick={async () => {
              try {
                await post("/api/auth/logout");
              } catch (e) {
                if (!(e instanceof ApiError) || e.status !== 401) return setLogoutError(e as ApiError);
              }
              window.location.assign("/login");
            }}
          >
            Log out
          </button>
        </div>
      </header>
      <nav id="nav" class={`nav${menuOpen ? " open" : ""}`} aria-label="Main">
        <ul>
          {NAV.filter((n) => n.visible(session)).map((n) => (
            <li>
              <a href={n.href} aria-current={section === n.href || (n.href === "/" && section === "/overview") ? "page" : undefined}>
                {n.label}
              </a>
            </li>
          ))}
          <li>
            <a href="/api/docs">API reference</a>
          </li>
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        <ErrorBox error={logoutError} />
        {children}
      </main>
    </div>
  );
}

function App() {
  const loc = useLocation();
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const [bootError, setBootError] = useState<ApiError>();
  const loadMe = useCallback(async () => {
    try {
      setMe(await get("/api/auth/me", { allowUnauthorized: true }));
      setBootError(undefined);
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) setMe(null);
      else setBootError(e as ApiError);
    }
  }, []);
  useEffect(() => {
    void loadMe();
  }, [loadMe]);
  useEffect(() => {
    setUnauthorizedHandler(() => {
      setMe(null);
      const here = window.location.pathname + window.location.search;
      if (!PUBLIC_PATHS.includes(window.location.pathname)) navigate(`/login?next=${encodeURIComponent(here)}`, { replace: true });
    });
  }, []);

  const isPublic = PUBLIC_PATHS.includes(loc.path);
  useEffect(() => {
    if (me === null && !isPublic) {
      navigate(`/login?next=${encodeURIComponent(loc.path + (loc.query.toString() ? `?${loc.query}` : ""))}`, { replace: true });
    }
  }, [me, isPublic, loc.path]);

  if (bootError) {
    return (
      <main id="main" class="public">
        <h1>Trust-Plane</h1>
        <ErrorBox error={bootError} />
        <button type="button" onClick={() => void loadMe()}>
          Try again
        </button>
      </main>
    );
  }
  if (me === undefined) {
    return (
      <main id="main" class="public" aria-busy="true">
        <div class="loading-bar" role="progressbar" aria-label="Loading" />
      </main>
    );
  }
  const afterLogin = async () => {
    await loadMe();
    const next = new URLSearchParams(window.location.search).get("next");
    navigate(next && next.startsWith("/") && !next.startsWith("//") ? next : "/", { replace: true });
  };
  if (loc.path === "/login") return <LoginPage onDone={afterLogin} />;
  if (loc.path === "/signup") return <SignupPage onDone={afterLogin} />;
  if (loc.path === "/accept-invitation") return <AcceptInvitationPage token={loc.query.get("token") ?? ""} onDone={afterLogin} />;
  if (me === null) return null;
  if (me.mfa_enrollment_required) {
    // The organization requires a second factor and this session has none: nothing else until it does.
    return (
      <SessionContext.Provider value={sessionOf(me, loadMe)}>
        <main id="main" class="public enrollment">
          <div class="public-card wide">
            <h1>Set up a second factor</h1>
            <EnrollmentPage />
            <p>
              <button
                type="button"
                class="link"
                onClick={async () => {
                  await post("/api/auth/logout").catch(() => undefined);
                  window.location.assign("/login");
                }}
              >
                Log out
              </button>
            </p>
          </div>
        </main>
      </SessionContext.Provider>
    );
  }
  return (
    <SessionContext.Provider value={sessionOf(me, loadMe)}>
      <Shell path={loc.path}>
        <Route path={loc.path} />
      </Shell>
    </SessionContext.Provider>
  );
}

// Every page first asks who is logged in: start that request now, before the first
// render, not from the App's effect after it (bench:web: it then finished last and held
// the score back).
prefetch("/api/auth/me");
// The overview is the first page people open: ask for its data together with the
// session check instead of after it (one round trip less before the score shows).
if (window.location.pathname === "/" || window.location.pathname === "/overview") {
  prefetch(OVERVIEW_URL);
  prefetch(REPORTS_URL, REPORTS_QUERY);
}

const root = document.getElementById("app")!;
interceptLinks(root);
render(<App />, root);
