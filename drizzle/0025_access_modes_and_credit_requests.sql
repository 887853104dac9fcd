CREATE TYPE "public"."credit_request_status" AS ENUM('submitted', 'approved', 'rejected');--> statement-breakpoint
CREATE TYPE "public"."workload_kind" AS ENUM('training', 'fine_tuning', 'inference');--> statement-breakpoint
CREATE TABLE "credit_line_requests" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"allocation_id" uuid NOT NULL,
	"current_cents" bigint NOT NULL,
	"requested_cents" bigint NOT NULL,
	"reason" text NOT NULL,
	"status" "credit_request_status" DEFAULT 'submitted' NOT NULL,
	"requested_by" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"decided_by" uuid,
	"decided_at" timestamp with time zone,
	"decision_comment" text,
	CONSTRAINT "credit_line_requests_larger_ck" CHECK ("credit_line_requests"."requested_cents" > "credit_line_requests"."current_cents")
);
--> statement-breakpoint
ALTER TABLE "projects" ALTER COLUMN "field_of_science" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "applications" ADD COLUMN "review_route" jsonb;--> statement-breakpoint
ALTER TABLE "projects" ADD COLUMN "workload_kind" "workload_kind";--> statement-breakpoint
ALTER TABLE "projects" ADD COLUMN "data_residency" "residency";--> statement-breakpoint
ALTER TABLE "credit_line_requests" ADD CONSTRAINT "credit_line_requests_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "credit_line_requests" ADD CONSTRAINT "credit_line_requests_allocation_id_allocations_id_fk" FOREIGN KEY ("allocation_id") REFERENCES "public"."allocations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "credit_line_requests" ADD CONSTRAINT "credit_line_requests_requested_by_users_id_fk" FOREIGN KEY ("requested_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "credit_line_requests" ADD CONSTRAINT "credit_line_requests_decided_by_users_id_fk" FOREIGN KEY ("decided_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "credit_line_requests_org_idx" ON "credit_line_requests" USING btree ("org_id");--> statement-breakpoint
CREATE INDEX "credit_line_requests_status_idx" ON "credit_line_requests" USING btree ("status","created_at");--> statement-breakpoint
-- Tenant-owned: behind the wall like the others (drizzle/0009, 0018, 0021, 0022). An owner asks in a
-- tenant call (insert, read its own); staff decide through the portal's own connection.
GRANT SELECT, INSERT ON credit_line_requests TO portal_tenant;
--> statement-breakpoint
ALTER TABLE credit_line_requests ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE credit_line_requests FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY service_rows ON credit_line_requests FOR ALL TO portal_service USING (true) WITH CHECK (true);
--> statement-breakpoint
CREATE POLICY tenant_rows ON credit_line_requests FOR SELECT TO portal_tenant USING (org_id = portal_tenant_id());
--> statement-breakpoint
CREATE POLICY tenant_insert ON credit_line_requests FOR INSERT TO portal_tenant WITH CHECK (org_id = portal_tenant_id());
