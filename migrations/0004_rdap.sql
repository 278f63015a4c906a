CREATE TABLE `rdap_bootstrap` (
	`url` text PRIMARY KEY NOT NULL,
	`body` text NOT NULL,
	`fetched_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `rdap_change_facts` (
	`history_id` integer PRIMARY KEY NOT NULL,
	`organization_id` integer NOT NULL,
	`monitor_id` integer NOT NULL,
	`domain_name` text NOT NULL,
	`observed_at` text NOT NULL,
	`registrar_changed` integer NOT NULL,
	`registrant_changed` integer NOT NULL,
	`nameservers_changed` integer NOT NULL,
	`status_changed` integer NOT NULL,
	`expiration_date` text,
	`previous_expiration_date` text,
	FOREIGN KEY (`history_id`) REFERENCES `rdap_history`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`monitor_id`) REFERENCES `rdap_monitors`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `rdap_change_facts_org_idx` ON `rdap_change_facts` (`organization_id`,`observed_at`);--> statement-breakpoint
CREATE TABLE `rdap_history` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`monitor_id` integer NOT NULL,
	`snapshot_id` integer NOT NULL,
	`previous_snapshot_id` integer,
	`observed_at` text NOT NULL,
	`changed` integer NOT NULL,
	`rdap_server` text NOT NULL,
	`http_status` integer NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`monitor_id`) REFERENCES `rdap_monitors`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`snapshot_id`) REFERENCES `rdap_snapshots`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`previous_snapshot_id`) REFERENCES `rdap_snapshots`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `rdap_history_monitor_idx` ON `rdap_history` (`monitor_id`,`observed_at`);--> statement-breakpoint
CREATE INDEX `rdap_history_org_changed_idx` ON `rdap_history` (`organization_id`,`changed`);--> statement-breakpoint
CREATE TABLE `rdap_monitors` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`domain_name` text NOT NULL,
	`tld` text NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`notes` text DEFAULT '' NOT NULL,
	`last_checked_at` text,
	`last_check_status` text,
	`last_check_detail` text,
	`last_snapshot_id` integer,
	`retry_at` text,
	`failure_count` integer DEFAULT 0 NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`last_snapshot_id`) REFERENCES `rdap_snapshots`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `rdap_monitors_org_domain_unique` ON `rdap_monitors` (`organization_id`,`domain_name`);--> statement-breakpoint
CREATE INDEX `rdap_monitors_domain_idx` ON `rdap_monitors` (`domain_name`);--> statement-breakpoint
CREATE INDEX `rdap_monitors_due_idx` ON `rdap_monitors` (`enabled`,`last_checked_at`);--> statement-breakpoint
CREATE TABLE `rdap_server_backoff` (
	`server` text PRIMARY KEY NOT NULL,
	`not_before` text NOT NULL,
	`reason` text NOT NULL,
	`consecutive_failures` integer DEFAULT 0 NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `rdap_snapshots` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`hash` text NOT NULL,
	`body` text NOT NULL,
	`size_bytes` integer NOT NULL,
	`domain_name` text NOT NULL,
	`first_seen_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `rdap_snapshots_hash_unique` ON `rdap_snapshots` (`hash`);