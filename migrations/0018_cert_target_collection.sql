ALTER TABLE `cert_scan_jobs` ADD `unleased_recorded_at` text;--> statement-breakpoint
ALTER TABLE `cert_targets` ADD `last_attempt_at` text;--> statement-breakpoint
ALTER TABLE `cert_targets` ADD `last_success_at` text;--> statement-breakpoint
ALTER TABLE `cert_targets` ADD `collection_failing_since` text;--> statement-breakpoint
ALTER TABLE `cert_targets` ADD `collection_failures` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `cert_targets` ADD `collection_next_attempt_at` text;--> statement-breakpoint
ALTER TABLE `cert_targets` ADD `collection_error_class` text;--> statement-breakpoint
ALTER TABLE `cert_targets` ADD `collection_error` text;--> statement-breakpoint
-- Targets scanned before collection state was kept: their last success is their newest scan
-- that obtained a TLS answer; the failure of a latest failed scan is read from that scan
-- (modules/cert-watcher/collection.ts, targetRecord) until the next attempt is recorded.
UPDATE `cert_targets` SET `last_success_at` = (SELECT max(s.`scanned_at`) FROM `cert_scans` s WHERE s.`target_id` = `cert_targets`.`id` AND s.`has_error` = 0);
