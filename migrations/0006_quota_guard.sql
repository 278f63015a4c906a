CREATE TABLE `quota_guard` (
	`resource` text NOT NULL,
	CONSTRAINT "quota_exceeded" CHECK(0)
);
