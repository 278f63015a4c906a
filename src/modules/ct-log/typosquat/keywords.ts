/**
 * Words that phishing and brand-abuse names attach to a brand ("ibmlogin", "secure-nic",
 * "accountibm"). A short protected label (3-4 characters) is inside many real, unrelated
 * words ("picnic", "electronic", "sonic" for nic), so an unseparated compound of one only
 * counts as an affix when the extra part is one of these words.
 *
 * Chosen from the words the combosquatting literature and lookalike scanners report most
 * (account access, payment, support, delivery); it overlaps dnstwist's own phishing
 * dictionary, so dnstwist's "dictionary" permutations are no independent test of it
 * (docs/lookalikes.md reports recall with and without them).
 */
export const AFFIX_KEYWORDS: ReadonlySet<string> = new Set([
  "access", "account", "accounts", "admin", "alert", "app", "apps", "auth", "bank", "banking", "billing", "blue", "business",
  "cdn", "check", "claim", "click", "client", "cloud", "confirm", "confirmation", "connect", "contact", "customer", "delivery",
  "download", "enroll", "find", "group", "help", "helpdesk", "http", "https", "id", "info", "install", "invoice", "join", "live",
  "login", "logon", "mail", "member", "mobile", "my", "net", "notice", "online", "pass", "password", "pay", "payment", "payments",
  "portal", "recovery", "refund", "register", "reset", "safe", "secure", "security", "service", "services", "shop", "signin",
  "signon", "signup", "sso", "ssl", "store", "summary", "support", "team", "unlock", "update", "user", "verify", "verification",
  "view", "wallet", "web", "webmail", "ww", "www",
]);
