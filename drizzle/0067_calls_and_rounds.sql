CREATE TYPE "public"."round_status" AS ENUM('open', 'closed');--> statement-breakpoint
CREATE TABLE "call_rounds" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"call_id" uuid NOT NULL,
	"cutoff_at" timestamp with time zone NOT NULL,
	"status" "round_status" DEFAULT 'open' NOT NULL,
	"closed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "calls" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"access_mode_id" text NOT NULL,
	"title" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"gpu_seconds_per_round" bigint NOT NULL,
	"created_by" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "calls_budget_ck" CHECK ("calls"."gpu_seconds_per_round" > 0)
);
--> statement-breakpoint
ALTER TABLE "applications" ADD COLUMN "round_id" uuid;--> statement-breakpoint
ALTER TABLE "call_rounds" ADD CONSTRAINT "call_rounds_call_id_calls_id_fk" FOREIGN KEY ("call_id") REFERENCES "public"."calls"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "calls" ADD CONSTRAINT "calls_access_mode_id_access_modes_id_fk" FOREIGN KEY ("access_mode_id") REFERENCES "public"."access_modes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "calls" ADD CONSTRAINT "calls_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "call_rounds_cutoff_idx" ON "call_rounds" USING btree ("call_id","cutoff_at");--> statement-breakpoint
CREATE INDEX "call_rounds_open_idx" ON "call_rounds" USING btree ("status","cutoff_at");--> statement-breakpoint
CREATE INDEX "calls_mode_idx" ON "calls" USING btree ("access_mode_id");--> statement-breakpoint
ALTER TABLE "applications" ADD CONSTRAINT "applications_round_id_call_rounds_id_fk" FOREIGN KEY ("round_id") REFERENCES "public"."call_rounds"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "applications_round_idx" ON "applications" USING btree ("round_id");--> statement-breakpoint
-- Calls and rounds are the centre's (issue #32): a tenant reads them (the form names the round a submission
-- joins), only the portal's own connection writes them. A tenant's submission records its round in
-- applications.round_id under the table's existing UPDATE grant (drizzle/0018); the service picks the round.
GRANT SELECT ON calls, call_rounds TO portal_tenant;
