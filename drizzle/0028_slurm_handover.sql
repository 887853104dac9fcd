CREATE TABLE "scheduler_status" (
	"id" integer PRIMARY KEY DEFAULT 1 NOT NULL,
	"reachable" boolean NOT NULL,
	"last_ok_at" timestamp with time zone,
	"unreachable_since" timestamp with time zone,
	"last_error" text,
	"checked_at" timestamp with time zone NOT NULL,
	CONSTRAINT "scheduler_status_one_row_ck" CHECK ("scheduler_status"."id" = 1)
);
--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "handover_attempts" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Every job before this migration counts as attempted once: its next hand-over is a retry, which looks first.
UPDATE "jobs" SET "handover_attempts" = 1;--> statement-breakpoint
-- Not tenant data: every tenant's job page may say that the scheduler is unreachable.
GRANT SELECT ON "scheduler_status" TO portal_tenant;
