CREATE TABLE `ct_filter_generation` (
	`id` integer PRIMARY KEY NOT NULL,
	`generation` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE `ct_filters` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`pattern` text NOT NULL,
	`match_type` text NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`feed_dns_enabled` integer DEFAULT false NOT NULL,
	`feed_certs_enabled` integer DEFAULT false NOT NULL,
	`typosquat_enabled` integer DEFAULT false NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	`deleted_at` text,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `ct_filters_org_pattern_type_live_unique` ON `ct_filters` (`organization_id`,`pattern`,`match_type`) WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX `ct_filters_org_idx` ON `ct_filters` (`organization_id`);--> statement-breakpoint
CREATE TABLE `ct_log_list_cache` (
	`id` integer PRIMARY KEY NOT NULL,
	`url` text NOT NULL,
	`source` text NOT NULL,
	`remote_error` text,
	`list` text NOT NULL,
	`fetched_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `ct_match_filters` (
	`match_id` integer NOT NULL,
	`filter_id` integer NOT NULL,
	`organization_id` integer NOT NULL,
	`matched_names` text NOT NULL,
	`occurrence_id` integer NOT NULL,
	`created_at` text NOT NULL,
	`event_emitted_at` text,
	PRIMARY KEY(`match_id`, `filter_id`),
	FOREIGN KEY (`match_id`) REFERENCES `ct_matches`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `ct_match_filters_filter_idx` ON `ct_match_filters` (`filter_id`);--> statement-breakpoint
CREATE TABLE `ct_match_occurrences` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`match_id` integer NOT NULL,
	`log_id` text NOT NULL,
	`log_name` text NOT NULL,
	`log_index` integer NOT NULL,
	`sha256` text NOT NULL,
	`is_precert` integer NOT NULL,
	`observed_at` text NOT NULL,
	`cert` text NOT NULL,
	`caa` text NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`match_id`) REFERENCES `ct_matches`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `ct_occurrences_org_log_index_unique` ON `ct_match_occurrences` (`organization_id`,`log_id`,`log_index`);--> statement-breakpoint
CREATE INDEX `ct_occurrences_match_idx` ON `ct_match_occurrences` (`match_id`);--> statement-breakpoint
CREATE INDEX `ct_occurrences_org_sha_idx` ON `ct_match_occurrences` (`organization_id`,`sha256`);--> statement-breakpoint
CREATE TABLE `ct_matches` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`dedup_key` text NOT NULL,
	`sha256` text NOT NULL,
	`certificate_domain` text NOT NULL,
	`matched_names` text NOT NULL,
	`first_matched_at` text NOT NULL,
	`last_matched_at` text NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `ct_matches_org_dedup_unique` ON `ct_matches` (`organization_id`,`dedup_key`);--> statement-breakpoint
CREATE INDEX `ct_matches_org_last_idx` ON `ct_matches` (`organization_id`,`last_matched_at`);--> statement-breakpoint
CREATE INDEX `ct_matches_last_idx` ON `ct_matches` (`last_matched_at`);--> statement-breakpoint
CREATE TABLE `ct_proposals` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`kind` text NOT NULL,
	`hostname` text NOT NULL,
	`filter_id` integer NOT NULL,
	`source_sha256` text NOT NULL,
	`status` text DEFAULT 'proposed' NOT NULL,
	`created_at` text NOT NULL,
	`decided_at` text,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `ct_proposals_org_kind_host_unique` ON `ct_proposals` (`organization_id`,`kind`,`hostname`);