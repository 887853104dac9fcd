ALTER TYPE "public"."mail_kind" ADD VALUE 'review_reminder';--> statement-breakpoint
ALTER TYPE "public"."mail_kind" ADD VALUE 'report_due';--> statement-breakpoint
CREATE TABLE "allocation_reports" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"application_id" uuid NOT NULL,
	"project_id" uuid NOT NULL,
	"org_id" uuid NOT NULL,
	"summary" text NOT NULL,
	"publications" jsonb NOT NULL,
	"datasets" jsonb NOT NULL,
	"filed_by" uuid NOT NULL,
	"filed_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "applications" ADD COLUMN "report_requested_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "allocation_reports" ADD CONSTRAINT "allocation_reports_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "allocation_reports" ADD CONSTRAINT "allocation_reports_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "allocation_reports" ADD CONSTRAINT "allocation_reports_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "allocation_reports" ADD CONSTRAINT "allocation_reports_filed_by_users_id_fk" FOREIGN KEY ("filed_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "allocation_reports_application_idx" ON "allocation_reports" USING btree ("application_id");--> statement-breakpoint
CREATE INDEX "allocation_reports_org_idx" ON "allocation_reports" USING btree ("org_id");--> statement-breakpoint
-- The tenant reads and files its own reports, only on its own requests (the applications policy keeps the
-- probe to the tenant's rows); staff read them through the service's policy. Nobody deletes one.
GRANT SELECT, INSERT, UPDATE ON allocation_reports TO portal_tenant;--> statement-breakpoint
ALTER TABLE allocation_reports ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE allocation_reports FORCE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE POLICY service_rows ON allocation_reports FOR ALL TO portal_service USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY tenant_rows ON allocation_reports FOR SELECT TO portal_tenant USING (org_id = portal_tenant_id());--> statement-breakpoint
CREATE POLICY tenant_insert ON allocation_reports FOR INSERT TO portal_tenant
  WITH CHECK (org_id = portal_tenant_id() AND application_id IN (SELECT id FROM applications WHERE project_id = allocation_reports.project_id));--> statement-breakpoint
CREATE POLICY tenant_update ON allocation_reports FOR UPDATE TO portal_tenant USING (org_id = portal_tenant_id())
  WITH CHECK (org_id = portal_tenant_id() AND application_id IN (SELECT id FROM applications WHERE project_id = allocation_reports.project_id));
