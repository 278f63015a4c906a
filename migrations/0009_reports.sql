CREATE TABLE `report_findings` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`report_id` integer NOT NULL,
	`position` integer NOT NULL,
	`rule_id` text NOT NULL,
	`title` text NOT NULL,
	`severity` text NOT NULL,
	`score_impact` integer NOT NULL,
	`category` text NOT NULL,
	`affected_assets` integer NOT NULL,
	`evidence` text NOT NULL,
	`evidence_total` integer NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`report_id`) REFERENCES `reports`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `report_findings_report_idx` ON `report_findings` (`report_id`,`position`);--> statement-breakpoint
CREATE INDEX `report_findings_org_rule_idx` ON `report_findings` (`organization_id`,`rule_id`);--> statement-breakpoint
CREATE TABLE `reports` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`report_type` text NOT NULL,
	`period_start` text NOT NULL,
	`period_end` text NOT NULL,
	`overall_score` integer NOT NULL,
	`grade` text NOT NULL,
	`category_scores` text NOT NULL,
	`organization_name` text NOT NULL,
	`generated_at` text NOT NULL,
	`pdf_filename` text NOT NULL,
	`appendix` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `reports_org_type_period_unique` ON `reports` (`organization_id`,`report_type`,`period_start`);--> statement-breakpoint
CREATE INDEX `reports_org_period_end_idx` ON `reports` (`organization_id`,`period_end`);--> statement-breakpoint
ALTER TABLE `mail_outbox` ADD `attachments` text;--> statement-breakpoint
CREATE INDEX `ct_occurrences_caa_violation_idx` ON `ct_match_occurrences` (`organization_id`,`observed_at`) WHERE json_extract(caa, '$.has_records') = 1 AND json_extract(caa, '$.authorized') = 0;