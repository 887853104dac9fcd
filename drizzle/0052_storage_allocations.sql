CREATE TABLE "storage_days" (
	"org_id" uuid NOT NULL,
	"day" date NOT NULL,
	"project_id" uuid NOT NULL,
	"site_id" text NOT NULL,
	"bytes" bigint NOT NULL,
	CONSTRAINT "storage_days_org_id_day_project_id_site_id_pk" PRIMARY KEY("org_id","day","project_id","site_id"),
	CONSTRAINT "storage_days_bytes_ck" CHECK ("storage_days"."bytes" >= 0)
);
--> statement-breakpoint
CREATE TABLE "storage_usage" (
	"project_id" uuid NOT NULL,
	"site_id" text NOT NULL,
	"org_id" uuid NOT NULL,
	"bytes" bigint NOT NULL,
	"measured_at" timestamp with time zone NOT NULL,
	"scanned_at" timestamp with time zone,
	"alerted_percent" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "storage_usage_project_id_site_id_pk" PRIMARY KEY("project_id","site_id"),
	CONSTRAINT "storage_usage_bytes_ck" CHECK ("storage_usage"."bytes" >= 0)
);
--> statement-breakpoint
ALTER TABLE "application_lines" DROP CONSTRAINT "application_lines_positive_ck";--> statement-breakpoint
ALTER TABLE "invoice_lines" ALTER COLUMN "resource_class_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "access_modes" ADD COLUMN "default_storage_gb" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "access_modes" ADD COLUMN "max_storage_gb" integer;--> statement-breakpoint
ALTER TABLE "allocations" ADD COLUMN "storage_gb" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "application_lines" ADD COLUMN "requested_storage_gb" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "invoice_lines" ADD COLUMN "kind" text DEFAULT 'compute' NOT NULL;--> statement-breakpoint
ALTER TABLE "invoice_lines" ADD COLUMN "site_id" text;--> statement-breakpoint
ALTER TABLE "invoice_lines" ADD COLUMN "storage_byte_days" bigint;--> statement-breakpoint
ALTER TABLE "invoice_lines" ADD COLUMN "milli_tb_months" bigint;--> statement-breakpoint
ALTER TABLE "invoice_lines" ADD COLUMN "unit_price_cents_per_tb_month" integer;--> statement-breakpoint
ALTER TABLE "sites" ADD COLUMN "storage_cents_per_tb_month" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "storage_days" ADD CONSTRAINT "storage_days_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "storage_days" ADD CONSTRAINT "storage_days_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "storage_days" ADD CONSTRAINT "storage_days_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "storage_usage" ADD CONSTRAINT "storage_usage_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "storage_usage" ADD CONSTRAINT "storage_usage_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "storage_usage" ADD CONSTRAINT "storage_usage_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "storage_days_day_idx" ON "storage_days" USING btree ("day");--> statement-breakpoint
CREATE INDEX "storage_usage_org_idx" ON "storage_usage" USING btree ("org_id");--> statement-breakpoint
ALTER TABLE "invoice_lines" ADD CONSTRAINT "invoice_lines_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "allocations" ADD CONSTRAINT "allocations_storage_ck" CHECK ("allocations"."storage_gb" >= 0);--> statement-breakpoint
ALTER TABLE "application_lines" ADD CONSTRAINT "application_lines_positive_ck" CHECK ("application_lines"."requested_gpu_seconds" > 0 and "application_lines"."requested_storage_gb" >= 0);--> statement-breakpoint
ALTER TABLE "invoice_lines" ADD CONSTRAINT "invoice_lines_kind_ck" CHECK (("invoice_lines"."kind" = 'compute' and "invoice_lines"."resource_class_id" is not null) or ("invoice_lines"."kind" = 'storage' and "invoice_lines"."site_id" is not null and "invoice_lines"."storage_byte_days" >= 0 and "invoice_lines"."milli_tb_months" >= 0 and "invoice_lines"."unit_price_cents_per_tb_month" >= 0));--> statement-breakpoint
-- hand-written:
-- Storage lines for what was granted before them (issue #27). Each access mode first gets the storage its
-- review path gives in the built-in catalogue (server/core/applications.ts `defaultModeStorage`); the
-- configured catalogue overwrites these figures on the next start (syncCatalogue), and staff can change
-- any allocation's line afterwards. An allocation granted on an application gets its mode's default; one
-- without (a credit line, pay-as-you-go or staff's) the pay-as-you-go default, 1,000 GB.
UPDATE access_modes SET default_storage_gb = CASE review_path WHEN 'instant' THEN 50 WHEN 'single' THEN 1000 ELSE 20000 END,
  max_storage_gb = CASE review_path WHEN 'instant' THEN 100 WHEN 'single' THEN 5000 ELSE 200000 END;
--> statement-breakpoint
UPDATE allocations SET storage_gb = access_modes.default_storage_gb
  FROM applications JOIN access_modes ON access_modes.id = applications.access_mode_id
  WHERE applications.id = allocations.application_id;
--> statement-breakpoint
UPDATE allocations SET storage_gb = 1000 WHERE application_id IS NULL;
--> statement-breakpoint
-- A request's lines asked for their mode's default (the reviewer granted what the allocation now holds).
UPDATE application_lines SET requested_storage_gb = access_modes.default_storage_gb
  FROM applications JOIN access_modes ON access_modes.id = applications.access_mode_id
  WHERE applications.id = application_lines.application_id AND applications.kind <> 'top_up';
--> statement-breakpoint
-- Tenant-owned, behind the wall like the others: tenants read their own workspaces' figures, and their own
-- calls write them (a delete through the files page takes its bytes off in the request's transaction).
GRANT SELECT, INSERT, UPDATE ON storage_usage, storage_days TO portal_tenant;
--> statement-breakpoint
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['storage_usage', 'storage_days'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY service_rows ON %I FOR ALL TO portal_service USING (true) WITH CHECK (true)', t);
    EXECUTE format('CREATE POLICY tenant_rows ON %I FOR SELECT TO portal_tenant USING (org_id = portal_tenant_id())', t);
    EXECUTE format('CREATE POLICY tenant_insert ON %I FOR INSERT TO portal_tenant WITH CHECK (org_id = portal_tenant_id())', t);
    EXECUTE format('CREATE POLICY tenant_update ON %I FOR UPDATE TO portal_tenant USING (org_id = portal_tenant_id()) WITH CHECK (org_id = portal_tenant_id())', t);
  END LOOP;
END $$;
