ALTER TYPE "public"."job_kind" ADD VALUE 'interactive';--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "app" text;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "idle_timeout_seconds" integer;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "session_seen_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_session_ck" CHECK (("jobs"."app" is null and "jobs"."idle_timeout_seconds" is null) or ("jobs"."app" is not null and "jobs"."idle_timeout_seconds" between 300 and 86400));