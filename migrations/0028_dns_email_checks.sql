ALTER TABLE `dns_domains` ADD `email_checks` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `dns_domains` ADD `email_json` text;