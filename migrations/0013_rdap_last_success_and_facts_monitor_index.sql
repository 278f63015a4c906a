ALTER TABLE `rdap_monitors` ADD `last_success_at` text;--> statement-breakpoint
CREATE INDEX `rdap_change_facts_monitor_idx` ON `rdap_change_facts` (`monitor_id`,`observed_at`);--> statement-breakpoint
-- Monitors whose latest check succeeded collected their data then (the new column's first value).
UPDATE `rdap_monitors` SET `last_success_at` = `last_checked_at` WHERE `last_check_status` = 'success';
