ALTER TABLE "scheduler_status" DROP CONSTRAINT "scheduler_status_one_row_ck";--> statement-breakpoint
-- hand-written: one row per cluster (a portal with several Slurm clusters notes each one's health); the
-- row there was is the single scheduler's, now named `default`.
ALTER TABLE "scheduler_status" ADD COLUMN "cluster" text NOT NULL DEFAULT 'default';--> statement-breakpoint
ALTER TABLE "scheduler_status" DROP COLUMN "id";--> statement-breakpoint
ALTER TABLE "scheduler_status" ALTER COLUMN "cluster" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "scheduler_status" ADD PRIMARY KEY ("cluster");
