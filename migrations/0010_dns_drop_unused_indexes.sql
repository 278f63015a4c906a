DROP INDEX `dns_domains_due_idx`;--> statement-breakpoint
DROP INDEX `dns_record_sets_name_type_idx`;