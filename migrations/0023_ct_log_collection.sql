ALTER TABLE `ct_log_list_cache` ADD `remote_error_class` text;--> statement-breakpoint
ALTER TABLE `ct_log_states` ADD `last_success_at` text;--> statement-breakpoint
ALTER TABLE `ct_log_states` ADD `last_error_class` text;--> statement-breakpoint
ALTER TABLE `ct_log_states` ADD `failing_since` text;--> statement-breakpoint
ALTER TABLE `ct_log_states` ADD `announced_state` text;--> statement-breakpoint
ALTER TABLE `ct_log_states` ADD `announced_failing_since` text;