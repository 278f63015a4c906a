/** The egress policy for connections opened on a user's behalf (see policy.ts). */
export { isUnicastScanTarget, parseHost, forbiddenAddressReason, forbiddenNameReason } from "./address";
export { AllowList } from "./allow-list";
export { assertUrlAllowed, checkHost, checkUrl, egressPolicy, type EgressPolicy, type EgressVerdict } from "./policy";
