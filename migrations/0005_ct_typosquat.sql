CREATE TABLE `ct_typosquat_matches` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`filter_id` integer NOT NULL,
	`candidate_domain` text NOT NULL,
	`dedup_key` text NOT NULL,
	`sha256` text NOT NULL,
	`certificate_name` text NOT NULL,
	`evidence` text NOT NULL,
	`evidence_key` text NOT NULL,
	`edit_distance` integer,
	`cert` text NOT NULL,
	`detected_at` text NOT NULL,
	`last_seen_at` text NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `ct_typosquat_unique` ON `ct_typosquat_matches` (`organization_id`,`filter_id`,`candidate_domain`,`dedup_key`);--> statement-breakpoint
CREATE INDEX `ct_typosquat_org_last_idx` ON `ct_typosquat_matches` (`organization_id`,`last_seen_at`);--> statement-breakpoint
CREATE INDEX `ct_typosquat_last_idx` ON `ct_typosquat_matches` (`last_seen_at`);--> statement-breakpoint
CREATE TABLE `ct_typosquat_occurrences` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`match_id` integer NOT NULL,
	`log_id` text NOT NULL,
	`log_name` text NOT NULL,
	`log_index` integer NOT NULL,
	`sha256` text NOT NULL,
	`is_precert` integer NOT NULL,
	`observed_at` text NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`match_id`) REFERENCES `ct_typosquat_matches`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `ct_typosquat_occ_unique` ON `ct_typosquat_occurrences` (`match_id`,`log_id`,`log_index`);--> statement-breakpoint
CREATE INDEX `ct_typosquat_occ_org_sha_idx` ON `ct_typosquat_occurrences` (`organization_id`,`sha256`);