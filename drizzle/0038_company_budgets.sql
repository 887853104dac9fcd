CREATE TABLE "budget_alerts" (
	"org_id" uuid NOT NULL,
	"scope" text NOT NULL,
	"subject_id" text NOT NULL,
	"period" text NOT NULL,
	"threshold_percent" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "budget_alerts_org_id_scope_subject_id_period_threshold_percent_pk" PRIMARY KEY("org_id","scope","subject_id","period","threshold_percent")
);
--> statement-breakpoint
CREATE TABLE "member_spend_limits" (
	"org_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"monthly_cents" bigint NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_by" uuid,
	CONSTRAINT "member_spend_limits_org_id_user_id_pk" PRIMARY KEY("org_id","user_id"),
	CONSTRAINT "member_spend_limits_amount_ck" CHECK ("member_spend_limits"."monthly_cents" >= 0)
);
--> statement-breakpoint
CREATE TABLE "project_budgets" (
	"project_id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"monthly_cents" bigint,
	"total_cents" bigint,
	"cost_centre" text,
	"purchase_order" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_by" uuid,
	CONSTRAINT "project_budgets_amounts_ck" CHECK ("project_budgets"."monthly_cents" >= 0 and "project_budgets"."total_cents" >= 0)
);
--> statement-breakpoint
ALTER TABLE "invoice_lines" ADD COLUMN "cost_centre" text;--> statement-breakpoint
ALTER TABLE "invoice_lines" ADD COLUMN "purchase_order" text;--> statement-breakpoint
ALTER TABLE "budget_alerts" ADD CONSTRAINT "budget_alerts_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "member_spend_limits" ADD CONSTRAINT "member_spend_limits_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "member_spend_limits" ADD CONSTRAINT "member_spend_limits_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "member_spend_limits" ADD CONSTRAINT "member_spend_limits_updated_by_users_id_fk" FOREIGN KEY ("updated_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "project_budgets" ADD CONSTRAINT "project_budgets_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "project_budgets" ADD CONSTRAINT "project_budgets_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "project_budgets" ADD CONSTRAINT "project_budgets_updated_by_users_id_fk" FOREIGN KEY ("updated_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "project_budgets_org_idx" ON "project_budgets" USING btree ("org_id");--> statement-breakpoint
-- hand-written:
-- Tenant-owned: behind the wall like the others (drizzle/0009, 0018, 0021, 0022, 0025). Owners and
-- managers set budgets and limits in tenant calls; a submission records the alerts it raised.
GRANT SELECT, INSERT, UPDATE ON project_budgets TO portal_tenant;
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON member_spend_limits TO portal_tenant;
--> statement-breakpoint
GRANT SELECT, INSERT ON budget_alerts TO portal_tenant;
--> statement-breakpoint
ALTER TABLE project_budgets ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE project_budgets FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY service_rows ON project_budgets FOR ALL TO portal_service USING (true) WITH CHECK (true);
--> statement-breakpoint
CREATE POLICY tenant_rows ON project_budgets FOR SELECT TO portal_tenant USING (org_id = portal_tenant_id());
--> statement-breakpoint
CREATE POLICY tenant_insert ON project_budgets FOR INSERT TO portal_tenant WITH CHECK (org_id = portal_tenant_id());
--> statement-breakpoint
CREATE POLICY tenant_update ON project_budgets FOR UPDATE TO portal_tenant USING (org_id = portal_tenant_id()) WITH CHECK (org_id = portal_tenant_id());
--> statement-breakpoint
ALTER TABLE member_spend_limits ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE member_spend_limits FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY service_rows ON member_spend_limits FOR ALL TO portal_service USING (true) WITH CHECK (true);
--> statement-breakpoint
CREATE POLICY tenant_rows ON member_spend_limits FOR SELECT TO portal_tenant USING (org_id = portal_tenant_id());
--> statement-breakpoint
CREATE POLICY tenant_insert ON member_spend_limits FOR INSERT TO portal_tenant WITH CHECK (org_id = portal_tenant_id());
--> statement-breakpoint
CREATE POLICY tenant_update ON member_spend_limits FOR UPDATE TO portal_tenant USING (org_id = portal_tenant_id()) WITH CHECK (org_id = portal_tenant_id());
--> statement-breakpoint
CREATE POLICY tenant_delete ON member_spend_limits FOR DELETE TO portal_tenant USING (org_id = portal_tenant_id());
--> statement-breakpoint
ALTER TABLE budget_alerts ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE budget_alerts FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY service_rows ON budget_alerts FOR ALL TO portal_service USING (true) WITH CHECK (true);
--> statement-breakpoint
CREATE POLICY tenant_rows ON budget_alerts FOR SELECT TO portal_tenant USING (org_id = portal_tenant_id());
--> statement-breakpoint
CREATE POLICY tenant_insert ON budget_alerts FOR INSERT TO portal_tenant WITH CHECK (org_id = portal_tenant_id());
--> statement-breakpoint
ALTER TABLE budget_alerts ADD CONSTRAINT budget_alerts_threshold_ck CHECK (threshold_percent IN (50, 80, 100));
