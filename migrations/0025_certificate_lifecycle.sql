CREATE TABLE `ct_issuance_policies` (
	`organization_id` integer PRIMARY KEY NOT NULL,
	`authorized_issuers` text NOT NULL,
	`known_key_list_ids` text NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `inventory_certificate_names` (
	`certificate_id` integer NOT NULL,
	`organization_id` integer NOT NULL,
	`hostname` text NOT NULL,
	`not_before` text NOT NULL,
	PRIMARY KEY(`certificate_id`, `hostname`),
	FOREIGN KEY (`certificate_id`) REFERENCES `inventory_certificates`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `inventory_names_org_host_idx` ON `inventory_certificate_names` (`organization_id`,`hostname`,`not_before`);--> statement-breakpoint
CREATE TABLE `inventory_certificates` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`dedup_key` text NOT NULL,
	`sha256` text NOT NULL,
	`served_sha256` text,
	`names` text NOT NULL,
	`subject` text NOT NULL,
	`issuer` text NOT NULL,
	`serial` text NOT NULL,
	`spki_sha256` text NOT NULL,
	`issuer_spki_sha256` text DEFAULT '' NOT NULL,
	`not_before` text NOT NULL,
	`not_after` text NOT NULL,
	`first_seen_ct_at` text,
	`ct_match_sha256` text,
	`filters` text NOT NULL,
	`authorization` text,
	`first_deployed_at` text,
	`last_deployed_at` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `inventory_certificates_org_dedup_unique` ON `inventory_certificates` (`organization_id`,`dedup_key`);--> statement-breakpoint
CREATE INDEX `inventory_certificates_org_sha_idx` ON `inventory_certificates` (`organization_id`,`sha256`);--> statement-breakpoint
CREATE INDEX `inventory_certificates_org_served_idx` ON `inventory_certificates` (`organization_id`,`served_sha256`);--> statement-breakpoint
CREATE INDEX `inventory_certificates_org_spki_idx` ON `inventory_certificates` (`organization_id`,`spki_sha256`);--> statement-breakpoint
CREATE TABLE `inventory_deployments` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`target_id` integer NOT NULL,
	`monitor_id` integer NOT NULL,
	`certificate_id` integer NOT NULL,
	`hostname` text NOT NULL,
	`ip_address` text NOT NULL,
	`port` integer NOT NULL,
	`first_seen_at` text NOT NULL,
	`last_seen_at` text NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`certificate_id`) REFERENCES `inventory_certificates`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `inventory_deployments_target_cert_unique` ON `inventory_deployments` (`target_id`,`certificate_id`);--> statement-breakpoint
CREATE INDEX `inventory_deployments_org_cert_idx` ON `inventory_deployments` (`organization_id`,`certificate_id`);--> statement-breakpoint
CREATE TABLE `inventory_hostnames` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`hostname` text NOT NULL,
	`state` text NOT NULL,
	`state_reason` text NOT NULL,
	`state_since` text NOT NULL,
	`previous_state` text,
	`renewal_status` text NOT NULL,
	`renewal_due_at` text,
	`renewal_overdue_at` text,
	`latest_certificate_id` integer,
	`latest_not_after` text,
	`renewal_interval_days` integer,
	`readiness` text NOT NULL,
	`readiness_from` text,
	`target_count` integer DEFAULT 0 NOT NULL,
	`evaluated_at` text NOT NULL,
	`next_review_at` text,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `inventory_hostnames_org_host_unique` ON `inventory_hostnames` (`organization_id`,`hostname`);--> statement-breakpoint
CREATE INDEX `inventory_hostnames_org_state_idx` ON `inventory_hostnames` (`organization_id`,`state`,`hostname`);--> statement-breakpoint
CREATE INDEX `inventory_hostnames_org_readiness_idx` ON `inventory_hostnames` (`organization_id`,`readiness`,`hostname`);--> statement-breakpoint
CREATE INDEX `inventory_hostnames_review_idx` ON `inventory_hostnames` (`next_review_at`);--> statement-breakpoint
CREATE TABLE `inventory_targets` (
	`target_id` integer PRIMARY KEY NOT NULL,
	`organization_id` integer NOT NULL,
	`certificate_id` integer,
	`scanned_at` text NOT NULL,
	`trust` text NOT NULL,
	`trust_detail` text DEFAULT '' NOT NULL,
	`ct_status` text,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`certificate_id`) REFERENCES `inventory_certificates`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `inventory_targets_org_idx` ON `inventory_targets` (`organization_id`);--> statement-breakpoint
ALTER TABLE `ct_filters` ADD `authorized_issuers` text;--> statement-breakpoint
ALTER TABLE `ct_match_filters` ADD `authorization` text;