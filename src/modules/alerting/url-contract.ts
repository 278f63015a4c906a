/**
 * How a destination URL is shown when it is a credential (scheme, host and port; the
 * rest masked): the channels' rule, also used for other secret URLs (the heartbeat).
 */
export { redactUrl } from "./channels/mask";
