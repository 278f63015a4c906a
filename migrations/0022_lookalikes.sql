CREATE TABLE `ct_lookalike_discovery_usage` (
	`organization_id` integer NOT NULL,
	`day` text NOT NULL,
	`queries` integer DEFAULT 0 NOT NULL,
	`queries_before_scheduled` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`organization_id`, `day`),
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `ct_lookalike_timeline` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`lookalike_id` integer NOT NULL,
	`at` text NOT NULL,
	`kind` text NOT NULL,
	`from_state` text,
	`to_state` text,
	`detail` text DEFAULT '' NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`lookalike_id`) REFERENCES `ct_lookalikes`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `ct_lookalike_timeline_lookalike` ON `ct_lookalike_timeline` (`lookalike_id`,`at`);--> statement-breakpoint
CREATE TABLE `ct_lookalikes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`domain` text NOT NULL,
	`protected_domain` text NOT NULL,
	`filter_id` integer,
	`source` text NOT NULL,
	`evidence` text NOT NULL,
	`edit_distance` integer,
	`confidence` text NOT NULL,
	`state` text DEFAULT 'new' NOT NULL,
	`state_changed_at` text NOT NULL,
	`dismissed_reason` text,
	`dismissed_at` text,
	`dismissed_by` integer,
	`first_seen_at` text NOT NULL,
	`certificate_seen_at` text,
	`dns` text,
	`serving` integer,
	`serving_detail` text,
	`registered_at` text,
	`registrar` text,
	`rdap_checked_at` text,
	`rdap_error` text,
	`last_checked_at` text,
	`last_success_at` text,
	`collection_failing_since` text,
	`collection_failures` integer DEFAULT 0 NOT NULL,
	`collection_next_attempt_at` text,
	`collection_error_class` text,
	`collection_error` text,
	`detected_event_at` text,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `ct_lookalikes_org_domain` ON `ct_lookalikes` (`organization_id`,`domain`);--> statement-breakpoint
CREATE INDEX `ct_lookalikes_org_state` ON `ct_lookalikes` (`organization_id`,`state`);--> statement-breakpoint
CREATE INDEX `ct_lookalikes_org_first_seen` ON `ct_lookalikes` (`organization_id`,`first_seen_at`);--> statement-breakpoint
CREATE INDEX `ct_lookalikes_next_check` ON `ct_lookalikes` (`collection_next_attempt_at`);