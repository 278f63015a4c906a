/** The agent/API contract of certificate scanning (see README.md). */
export * from "./vocabulary";
export * from "./scan-result";
export * from "./lease";
