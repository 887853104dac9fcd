CREATE TABLE "scheduler_budget_syncs" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"project_ids" jsonb,
	"ok" boolean NOT NULL,
	"budgets" integer NOT NULL,
	"mismatches" jsonb NOT NULL,
	"error" text
);
--> statement-breakpoint
CREATE INDEX "scheduler_budget_syncs_at_idx" ON "scheduler_budget_syncs" USING btree ("at");--> statement-breakpoint
-- Centre internals, like cluster_samples (drizzle/0017): tenant reads and writes never need them. New
-- tables are already out of the tenant role's reach by default (0017); said here so it stays so.
REVOKE ALL ON scheduler_budget_syncs FROM portal_tenant;
