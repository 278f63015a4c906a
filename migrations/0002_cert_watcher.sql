CREATE TABLE `cert_agents` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`name` text NOT NULL,
	`token_hash` text NOT NULL,
	`token_prefix` text NOT NULL,
	`created_by` integer,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	`last_seen_at` text,
	`revoked_at` text,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `cert_agents_token_hash_unique` ON `cert_agents` (`token_hash`);--> statement-breakpoint
CREATE INDEX `cert_agents_org_idx` ON `cert_agents` (`organization_id`);--> statement-breakpoint
CREATE TABLE `cert_monitors` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`cn` text NOT NULL,
	`port` integer DEFAULT 443 NOT NULL,
	`target_dns` text DEFAULT '' NOT NULL,
	`starttls` text,
	`enabled` integer DEFAULT true NOT NULL,
	`notes` text DEFAULT '' NOT NULL,
	`root_ca` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	`last_scan_time` text,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `cert_monitors_org_cn_port_dns_unique` ON `cert_monitors` (`organization_id`,`cn`,`port`,`target_dns`);--> statement-breakpoint
CREATE TABLE `cert_scan_jobs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`monitor_id` integer NOT NULL,
	`target_id` integer NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`created_at` text NOT NULL,
	`leased_at` text,
	`lease_expires_at` text,
	`agent_id` integer,
	`attempts` integer DEFAULT 0 NOT NULL,
	`completed_at` text,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`monitor_id`) REFERENCES `cert_monitors`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`target_id`) REFERENCES `cert_targets`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`agent_id`) REFERENCES `cert_agents`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `cert_scan_jobs_open_target_unique` ON `cert_scan_jobs` (`target_id`) WHERE status <> 'done';--> statement-breakpoint
CREATE INDEX `cert_scan_jobs_org_status_idx` ON `cert_scan_jobs` (`organization_id`,`status`);--> statement-breakpoint
CREATE TABLE `cert_scans` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`monitor_id` integer NOT NULL,
	`target_id` integer NOT NULL,
	`job_id` integer,
	`agent_id` integer,
	`scanned_at` text NOT NULL,
	`ip_address` text NOT NULL,
	`connection_method` text NOT NULL,
	`has_error` integer NOT NULL,
	`error` text DEFAULT '' NOT NULL,
	`protocols` text NOT NULL,
	`ciphers` text NOT NULL,
	`named_groups` text NOT NULL,
	`cert_sha256` text,
	`cert_subject` text,
	`cert_issuer` text,
	`cert_not_before` text,
	`cert_not_after` text,
	`validity_days` integer,
	`chain_length` integer,
	`protocol_status` text NOT NULL,
	`cipher_status` text NOT NULL,
	`validation_status` text NOT NULL,
	`expired` integer DEFAULT false NOT NULL,
	`legacy_protocol` integer DEFAULT false NOT NULL,
	`weak_cipher` integer DEFAULT false NOT NULL,
	`self_signed` integer DEFAULT false NOT NULL,
	`weak_suites` text NOT NULL,
	`frameworks` text NOT NULL,
	`result` text NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`monitor_id`) REFERENCES `cert_monitors`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`target_id`) REFERENCES `cert_targets`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `cert_scans_job_unique` ON `cert_scans` (`job_id`);--> statement-breakpoint
CREATE INDEX `cert_scans_monitor_time_idx` ON `cert_scans` (`monitor_id`,`scanned_at`);--> statement-breakpoint
CREATE INDEX `cert_scans_org_time_idx` ON `cert_scans` (`organization_id`,`scanned_at`);--> statement-breakpoint
CREATE TABLE `cert_targets` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`monitor_id` integer NOT NULL,
	`ip_address` text NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	`last_scan_at` text,
	`last_scan_id` integer,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`monitor_id`) REFERENCES `cert_monitors`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `cert_targets_monitor_ip_unique` ON `cert_targets` (`monitor_id`,`ip_address`);--> statement-breakpoint
CREATE INDEX `cert_targets_org_idx` ON `cert_targets` (`organization_id`);