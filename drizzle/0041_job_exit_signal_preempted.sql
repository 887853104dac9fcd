ALTER TYPE "public"."job_state" ADD VALUE 'PREEMPTED';--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "exit_signal" integer;