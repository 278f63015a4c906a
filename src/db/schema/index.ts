// Every Drizzle table, one module per feature. drizzle-kit reads this file.
export * from "./platform";
export * from "./lists";
export * from "./alerting";
export * from "./cert-watcher";
export * from "./ct-log";
export * from "./rdap";
export * from "./dns-watcher";
export * from "./reports";
export * from "./lookalikes";
export * from "./identity";
export * from "./inventory";
