CREATE TYPE "public"."what_if_status" AS ENUM('queued', 'running', 'done', 'failed');--> statement-breakpoint
CREATE TABLE "what_if_runs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"title" text NOT NULL,
	"created_by" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"from_day" date NOT NULL,
	"to_day" date NOT NULL,
	"changes" jsonb NOT NULL,
	"status" "what_if_status" DEFAULT 'queued' NOT NULL,
	"progress_permille" integer DEFAULT 0 NOT NULL,
	"lease_until" timestamp with time zone,
	"attempts" integer DEFAULT 0 NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"error" text,
	"result" jsonb
);
--> statement-breakpoint
ALTER TABLE "what_if_runs" ADD CONSTRAINT "what_if_runs_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "what_if_runs_created_idx" ON "what_if_runs" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "what_if_runs_open_idx" ON "what_if_runs" USING btree ("created_at") WHERE status in ('queued', 'running');--> statement-breakpoint
-- hand-written:
-- Centre internals behind the wall (as api_tokens, drizzle/0035): only the portal's own connection
-- (staff procedures and the worker) reads and writes what-if runs, through service_rows.
ALTER TABLE what_if_runs ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE what_if_runs FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY service_rows ON what_if_runs FOR ALL TO portal_service USING (true) WITH CHECK (true);
--> statement-breakpoint
ALTER TABLE what_if_runs ADD CONSTRAINT what_if_runs_period CHECK (from_day <= to_day);
--> statement-breakpoint
ALTER TABLE what_if_runs ADD CONSTRAINT what_if_runs_progress CHECK (progress_permille BETWEEN 0 AND 1000);
