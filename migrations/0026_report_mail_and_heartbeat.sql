CREATE TABLE `organization_heartbeats` (
	`organization_id` integer PRIMARY KEY NOT NULL,
	`url_sealed` text NOT NULL,
	`url_hint` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	`updated_at` text NOT NULL,
	`last_run_at` text,
	`last_outcome` text,
	`last_reason` text,
	`last_error_class` text,
	`last_http_status` integer,
	`last_pinged_at` text,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `report_recipients` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`email` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `report_recipients_org_email_unique` ON `report_recipients` (`organization_id`,`email`);--> statement-breakpoint
ALTER TABLE `mail_outbox` ADD `last_error_class` text;--> statement-breakpoint
ALTER TABLE `mail_outbox` ADD `last_attempt_at` text;--> statement-breakpoint
ALTER TABLE `mail_outbox` ADD `reference` text;--> statement-breakpoint
CREATE INDEX `mail_outbox_reference_idx` ON `mail_outbox` (`organization_id`,`kind`,`reference`);