CREATE TABLE "billing_profiles" (
	"org_id" uuid PRIMARY KEY NOT NULL,
	"legal_name" text NOT NULL,
	"street" text NOT NULL,
	"postcode" text NOT NULL,
	"city" text NOT NULL,
	"country" char(2) NOT NULL,
	"vat_id" text,
	"billing_email" text NOT NULL,
	"purchase_order" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_by" uuid
);
--> statement-breakpoint
ALTER TABLE "billing_profiles" ADD CONSTRAINT "billing_profiles_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "billing_profiles" ADD CONSTRAINT "billing_profiles_updated_by_users_id_fk" FOREIGN KEY ("updated_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- Tenant-owned: behind the wall like the others (drizzle/0009, 0018, 0021).
GRANT SELECT, INSERT, UPDATE ON billing_profiles TO portal_tenant;
--> statement-breakpoint
ALTER TABLE billing_profiles ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE billing_profiles FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY service_rows ON billing_profiles FOR ALL TO portal_service USING (true) WITH CHECK (true);
--> statement-breakpoint
CREATE POLICY tenant_rows ON billing_profiles FOR SELECT TO portal_tenant USING (org_id = portal_tenant_id());
--> statement-breakpoint
CREATE POLICY tenant_insert ON billing_profiles FOR INSERT TO portal_tenant WITH CHECK (org_id = portal_tenant_id());
--> statement-breakpoint
CREATE POLICY tenant_update ON billing_profiles FOR UPDATE TO portal_tenant USING (org_id = portal_tenant_id()) WITH CHECK (org_id = portal_tenant_id());
