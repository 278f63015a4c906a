CREATE TABLE `ct_log_states` (
	`log_id` text PRIMARY KEY NOT NULL,
	`log_name` text NOT NULL,
	`verified_position` integer,
	`tree_size` integer,
	`tree_head_at` text,
	`verified_tree_head_at` text,
	`last_entry_at` text,
	`last_run_at` text,
	`last_error` text,
	`consecutive_failures` integer DEFAULT 0 NOT NULL,
	`backoff_until` text,
	`entries_processed` integer DEFAULT 0 NOT NULL,
	`matches_found` integer DEFAULT 0 NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `ct_publication_clock` (
	`id` integer PRIMARY KEY NOT NULL,
	`at_ms` integer NOT NULL,
	`at` text NOT NULL
);
--> statement-breakpoint
ALTER TABLE `ct_proposals` ADD `cert_monitor_id` integer;--> statement-breakpoint
ALTER TABLE `ct_typosquat_matches` ADD `event_emitted_at` text;--> statement-breakpoint
CREATE INDEX `ct_typosquat_org_detected_idx` ON `ct_typosquat_matches` (`organization_id`,`detected_at`);--> statement-breakpoint
CREATE INDEX `ct_match_filters_occurrence_idx` ON `ct_match_filters` (`occurrence_id`);--> statement-breakpoint
CREATE INDEX `ct_matches_org_first_idx` ON `ct_matches` (`organization_id`,`first_matched_at`);--> statement-breakpoint
CREATE INDEX `ct_typosquat_occ_org_log_idx` ON `ct_typosquat_occurrences` (`organization_id`,`log_id`,`log_index`);