-- Row-level security: the second wall behind the tenancy checks of the API. Tenant reads run in a
-- transaction that switches to the role portal_tenant (no BYPASSRLS) and sets app.tenant_id; these
-- policies then show only the tenant's own rows, even if a query forgot its tenant filter.
-- The portal's own connection (a superuser, or the table owner) is not bound by them.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'portal_tenant') THEN
    CREATE ROLE portal_tenant NOLOGIN NOBYPASSRLS;
  END IF;
END
$$;
--> statement-breakpoint
GRANT portal_tenant TO CURRENT_USER;
--> statement-breakpoint
GRANT USAGE ON SCHEMA public TO portal_tenant;
--> statement-breakpoint
GRANT SELECT ON ALL TABLES IN SCHEMA public TO portal_tenant;
--> statement-breakpoint
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO portal_tenant;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION portal_tenant_id() RETURNS uuid LANGUAGE sql STABLE AS $$
  SELECT nullif(current_setting('app.tenant_id', true), '')::uuid
$$;
--> statement-breakpoint
ALTER TABLE organisations ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_rows ON organisations FOR SELECT TO portal_tenant USING (id = portal_tenant_id());
--> statement-breakpoint
ALTER TABLE memberships ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_rows ON memberships FOR SELECT TO portal_tenant USING (org_id = portal_tenant_id());
--> statement-breakpoint
ALTER TABLE invitations ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_rows ON invitations FOR SELECT TO portal_tenant USING (org_id = portal_tenant_id());
--> statement-breakpoint
ALTER TABLE projects ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_rows ON projects FOR SELECT TO portal_tenant USING (org_id = portal_tenant_id());
--> statement-breakpoint
ALTER TABLE project_members ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_rows ON project_members FOR SELECT TO portal_tenant USING (project_id IN (SELECT id FROM projects));
--> statement-breakpoint
ALTER TABLE applications ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_rows ON applications FOR SELECT TO portal_tenant USING (org_id = portal_tenant_id());
--> statement-breakpoint
ALTER TABLE application_lines ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_rows ON application_lines FOR SELECT TO portal_tenant USING (application_id IN (SELECT id FROM applications));
--> statement-breakpoint
ALTER TABLE decisions ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_rows ON decisions FOR SELECT TO portal_tenant USING (application_id IN (SELECT id FROM applications));
--> statement-breakpoint
ALTER TABLE allocations ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_rows ON allocations FOR SELECT TO portal_tenant USING (org_id = portal_tenant_id());
--> statement-breakpoint
ALTER TABLE ledger_entries ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_rows ON ledger_entries FOR SELECT TO portal_tenant USING (allocation_id IN (SELECT id FROM allocations));
--> statement-breakpoint
ALTER TABLE jobs ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_rows ON jobs FOR SELECT TO portal_tenant USING (org_id = portal_tenant_id());
--> statement-breakpoint
ALTER TABLE job_events ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_rows ON job_events FOR SELECT TO portal_tenant USING (job_id IN (SELECT id FROM jobs));
--> statement-breakpoint
ALTER TABLE usage_rollups ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_rows ON usage_rollups FOR SELECT TO portal_tenant USING (org_id = portal_tenant_id());
--> statement-breakpoint
ALTER TABLE invoices ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_rows ON invoices FOR SELECT TO portal_tenant USING (org_id = portal_tenant_id());
--> statement-breakpoint
ALTER TABLE invoice_lines ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_rows ON invoice_lines FOR SELECT TO portal_tenant USING (invoice_id IN (SELECT id FROM invoices));
--> statement-breakpoint
ALTER TABLE credit_notes ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_rows ON credit_notes FOR SELECT TO portal_tenant USING (org_id = portal_tenant_id());
--> statement-breakpoint
ALTER TABLE audit_events ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_rows ON audit_events FOR SELECT TO portal_tenant USING (org_id = portal_tenant_id());
