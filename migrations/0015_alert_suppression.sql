ALTER TABLE `alert_history` ADD `status` text DEFAULT 'fired' NOT NULL;--> statement-breakpoint
ALTER TABLE `alert_history` ADD `suppressed_reason` text;--> statement-breakpoint
ALTER TABLE `alert_history` ADD `repeats_alert_id` integer;--> statement-breakpoint
ALTER TABLE `alert_history` ADD `suppressed_until` text;--> statement-breakpoint
ALTER TABLE `alert_history` ADD `asset` text DEFAULT '' NOT NULL;--> statement-breakpoint
CREATE INDEX `alert_history_org_rule_fired_idx` ON `alert_history` (`organization_id`,`rule_id`,`fired_at`);