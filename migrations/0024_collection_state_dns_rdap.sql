ALTER TABLE `rdap_monitors` ADD `collection_failing_since` text;--> statement-breakpoint
ALTER TABLE `rdap_monitors` ADD `collection_failures` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `rdap_monitors` ADD `collection_next_attempt_at` text;--> statement-breakpoint
ALTER TABLE `rdap_monitors` ADD `collection_error_class` text;--> statement-breakpoint
ALTER TABLE `rdap_monitors` ADD `collection_error` text;--> statement-breakpoint
ALTER TABLE `dns_domains` ADD `collection_failing_since` text;--> statement-breakpoint
ALTER TABLE `dns_domains` ADD `collection_failures` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `dns_domains` ADD `collection_next_attempt_at` text;--> statement-breakpoint
ALTER TABLE `dns_domains` ADD `collection_error_class` text;--> statement-breakpoint
ALTER TABLE `dns_domains` ADD `collection_error` text;--> statement-breakpoint
ALTER TABLE `dns_record_sets` ADD `collection_failing_since` text;--> statement-breakpoint
ALTER TABLE `dns_record_sets` ADD `collection_failures` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `dns_record_sets` ADD `collection_error_class` text;--> statement-breakpoint
ALTER TABLE `dns_record_sets` ADD `last_success_at` text;