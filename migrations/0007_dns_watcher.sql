CREATE TABLE `dns_change_facts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`domain_id` integer NOT NULL,
	`domain_name` text NOT NULL,
	`observed_at` text NOT NULL,
	`kind` text NOT NULL,
	`record_name` text NOT NULL,
	`record_type` text,
	`old_values` text NOT NULL,
	`new_values` text NOT NULL,
	`detail` text NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`domain_id`) REFERENCES `dns_domains`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `dns_change_facts_org_idx` ON `dns_change_facts` (`organization_id`,`observed_at`);--> statement-breakpoint
CREATE TABLE `dns_domains` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`domain_name` text NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`notes` text DEFAULT '' NOT NULL,
	`last_checked_at` text,
	`last_check_status` text,
	`last_check_detail` text,
	`dnssec_status` text DEFAULT 'unknown' NOT NULL,
	`dnssec_error` text DEFAULT '' NOT NULL,
	`spf_json` text,
	`dmarc_json` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `dns_domains_org_domain_unique` ON `dns_domains` (`organization_id`,`domain_name`);--> statement-breakpoint
CREATE INDEX `dns_domains_due_idx` ON `dns_domains` (`enabled`,`last_checked_at`);--> statement-breakpoint
CREATE TABLE `dns_history` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`domain_id` integer NOT NULL,
	`observed_at` text NOT NULL,
	`kind` text NOT NULL,
	`record_name` text NOT NULL,
	`record_type` text,
	`old_values` text NOT NULL,
	`new_values` text NOT NULL,
	`detail` text NOT NULL,
	`analysis_json` text,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`domain_id`) REFERENCES `dns_domains`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `dns_history_domain_idx` ON `dns_history` (`domain_id`,`observed_at`);--> statement-breakpoint
CREATE TABLE `dns_record_sets` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`domain_id` integer NOT NULL,
	`name` text NOT NULL,
	`type` text NOT NULL,
	`values_json` text,
	`rcode` text,
	`last_error` text,
	`last_changed_at` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`domain_id`) REFERENCES `dns_domains`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `dns_record_sets_domain_name_type_unique` ON `dns_record_sets` (`domain_id`,`name`,`type`);--> statement-breakpoint
CREATE INDEX `dns_record_sets_name_type_idx` ON `dns_record_sets` (`name`,`type`);