/**
 * What other modules may read of the DNS watcher's email checks (.dependency-cruiser.cjs
 * allows them this file): each enabled domain's mail transport security in a few words per
 * mechanism, for the weekly report's appendix.
 */
export { emailSummaries, type DomainEmailSummary, type MailMechanismSummary } from "./email/summary";
