/**
 * Collection state: the one vocabulary every monitoring module uses to say whether it
 * could look (see vocabulary.ts), the transition each attempt goes through (state.ts),
 * the classifier of outside failures (classify.ts), the API object (schema.ts), the
 * fields of collection events (event.ts) and quiet logs for expected failures (log.ts).
 */
export * from "./vocabulary";
export * from "./state";
export * from "./classify";
export * from "./log";
export * from "./event";
