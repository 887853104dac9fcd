-- Idempotency as Stripe defines it (issue #31): the same key with the same body answers the same job,
-- with another body 422; a key is kept 24 hours. The hash of the first body is kept with the job.
ALTER TABLE "jobs" ADD COLUMN "idempotency_fingerprint" text;--> statement-breakpoint
-- A key older than 24 hours is released for a new job in the tenant's own transaction: its job keeps the
-- key with " expired <job id>" appended (a space no key may hold, so it can never be asked for again).
GRANT UPDATE ("idempotency_key") ON "jobs" TO portal_tenant;
