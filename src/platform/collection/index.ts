/**
 * Collection state: the one vocabulary every monitoring module uses to say whether it
 * could look (see vocabulary.ts), the transition each attempt goes through (state.ts),
 * the classifier of outside failures (classify.ts), the API object (schema.ts), the
 * fields of collection events (event.ts), quiet logs for expected failures (log.ts) and
 * the next attempt of an asset switched back on (schedule.ts).
 */
export * from "./vocabulary";
export * from "./state";
export * from "./classify";
export * from "./log";
export * from "./event";
export * from "./schedule";
