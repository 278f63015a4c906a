ALTER TABLE `alert_deliveries` ADD `action` text DEFAULT 'trigger' NOT NULL;--> statement-breakpoint
ALTER TABLE `alert_deliveries` ADD `attempt_log` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `alert_history` ADD `alert_key` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `alert_history` ADD `state` text;--> statement-breakpoint
ALTER TABLE `alert_history` ADD `occurrences` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `alert_history` ADD `last_matched_at` text;--> statement-breakpoint
ALTER TABLE `alert_history` ADD `acknowledged_at` text;--> statement-breakpoint
ALTER TABLE `alert_history` ADD `acknowledged_by` text;--> statement-breakpoint
ALTER TABLE `alert_history` ADD `resolved_at` text;--> statement-breakpoint
ALTER TABLE `alert_history` ADD `resolved_by` text;--> statement-breakpoint
ALTER TABLE `alert_history` ADD `resolution` text;--> statement-breakpoint
CREATE INDEX `alert_history_org_key_state_idx` ON `alert_history` (`organization_id`,`alert_key`,`state`);--> statement-breakpoint
CREATE INDEX `alert_history_org_asset_state_idx` ON `alert_history` (`organization_id`,`module`,`asset`,`state`);--> statement-breakpoint
-- Alerts sent before alerts had a state were never acknowledged nor resolved: open.
UPDATE `alert_history` SET `state` = 'open' WHERE `status` = 'fired';
