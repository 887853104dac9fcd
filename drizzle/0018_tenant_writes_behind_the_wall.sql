-- Row-level security for writes. Tenant mutations now run like tenant reads: in one transaction as the
-- role portal_tenant with app.tenant_id set (server/api/trpc.ts). This migration
-- 1. lets that role write exactly what tenant mutations write, each table with a policy whose USING and
--    WITH CHECK keep the rows the tenant's own (a write that forgot its tenant filter changes nothing of
--    another tenant's, an insert for another tenant is refused);
-- 2. FORCEs the policies on every tenant-owned table, so the table owner is bound by them too: the
--    portal's own connection (staff views, the worker, the scheduler hand-over, migrations) passes
--    through the explicit policy `service_rows` of the role portal_service, and only while no tenant
--    is set — a transaction that set a tenant sees that tenant's rows whatever its role;
-- 3. gives the two writes that cross the wall on purpose a SECURITY DEFINER function each: who is staff
--    (an application's reviewers are told) and ending the sessions of someone removed from their last
--    tenant. Superusers (PGlite's embedded database) bypass row-level security except as portal_tenant.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'portal_service') THEN
    CREATE ROLE portal_service NOLOGIN NOBYPASSRLS;
  END IF;
END
$$;
--> statement-breakpoint
GRANT portal_service TO CURRENT_USER;
--> statement-breakpoint
GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO portal_tenant;
--> statement-breakpoint
-- What tenant mutations write, and nothing else: the cap on the organisation (and the row locks of the
-- lock order, which need an UPDATE privilege), role changes and removals, invitations, projects and
-- their members, applications with their lines and an auto-approved one's decision and allocation,
-- reservations (allocation balance + ledger row), jobs and their events, audit rows, notices.
GRANT UPDATE (monthly_cap_cents) ON organisations TO portal_tenant;
--> statement-breakpoint
GRANT UPDATE (role), DELETE ON memberships TO portal_tenant;
--> statement-breakpoint
GRANT INSERT, UPDATE ON invitations TO portal_tenant;
--> statement-breakpoint
GRANT INSERT, UPDATE ON projects TO portal_tenant;
--> statement-breakpoint
GRANT INSERT, UPDATE, DELETE ON project_members TO portal_tenant;
--> statement-breakpoint
GRANT INSERT, UPDATE ON applications TO portal_tenant;
--> statement-breakpoint
GRANT INSERT, UPDATE, DELETE ON application_lines TO portal_tenant;
--> statement-breakpoint
GRANT INSERT ON decisions TO portal_tenant;
--> statement-breakpoint
GRANT INSERT, UPDATE ON allocations TO portal_tenant;
--> statement-breakpoint
GRANT INSERT ON ledger_entries TO portal_tenant;
--> statement-breakpoint
GRANT INSERT, UPDATE (cancel_requested_at, updated_at) ON jobs TO portal_tenant;
--> statement-breakpoint
GRANT INSERT ON job_events TO portal_tenant;
--> statement-breakpoint
GRANT INSERT ON audit_events TO portal_tenant;
--> statement-breakpoint
GRANT INSERT ON notifications TO portal_tenant;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION portal_is_staff(person uuid) RETURNS boolean LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT EXISTS (SELECT 1 FROM staff_roles WHERE user_id = person)
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION portal_staff_ids() RETURNS SETOF uuid LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT DISTINCT user_id FROM staff_roles
$$;
--> statement-breakpoint
-- Runs with no tenant set, so it counts the person's memberships in every tenant, not only this one
-- (a function's own SET clause would need a superuser for a custom setting).
CREATE OR REPLACE FUNCTION portal_end_sessions_if_unattached(person uuid) RETURNS integer LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  tenant text := coalesce(current_setting('app.tenant_id', true), '');
  ended integer;
BEGIN
  PERFORM set_config('app.tenant_id', '', true);
  UPDATE sessions SET ended_at = now(), end_reason = 'removed'
  WHERE user_id = person AND ended_at IS NULL
    AND NOT EXISTS (SELECT 1 FROM memberships WHERE user_id = person)
    AND NOT EXISTS (SELECT 1 FROM staff_roles WHERE user_id = person);
  GET DIAGNOSTICS ended = ROW_COUNT;
  PERFORM set_config('app.tenant_id', tenant, true);
  RETURN ended;
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION portal_is_staff(uuid), portal_staff_ids(), portal_end_sessions_if_unattached(uuid) FROM PUBLIC;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION portal_is_staff(uuid), portal_staff_ids(), portal_end_sessions_if_unattached(uuid) TO portal_tenant, portal_service;
--> statement-breakpoint
ALTER TABLE notifications ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['organisations', 'memberships', 'invitations', 'projects', 'project_members', 'applications', 'application_lines', 'decisions', 'allocations', 'ledger_entries', 'jobs', 'job_events', 'usage_rollups', 'invoices', 'invoice_lines', 'credit_notes', 'audit_events', 'notifications'] LOOP
    EXECUTE format('CREATE POLICY service_rows ON %I FOR ALL TO portal_service USING (portal_tenant_id() IS NULL) WITH CHECK (portal_tenant_id() IS NULL)', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
  END LOOP;
END
$$;
--> statement-breakpoint
-- Tables keyed by org_id: the tenant's rows before and after every write.
DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['invitations', 'projects', 'applications', 'allocations', 'jobs'] LOOP
    EXECUTE format('CREATE POLICY tenant_insert ON %I FOR INSERT TO portal_tenant WITH CHECK (org_id = portal_tenant_id())', t);
    EXECUTE format('CREATE POLICY tenant_update ON %I FOR UPDATE TO portal_tenant USING (org_id = portal_tenant_id()) WITH CHECK (org_id = portal_tenant_id())', t);
  END LOOP;
END
$$;
--> statement-breakpoint
CREATE POLICY tenant_update ON organisations FOR UPDATE TO portal_tenant USING (id = portal_tenant_id()) WITH CHECK (id = portal_tenant_id());
--> statement-breakpoint
CREATE POLICY tenant_update ON memberships FOR UPDATE TO portal_tenant USING (org_id = portal_tenant_id()) WITH CHECK (org_id = portal_tenant_id());
--> statement-breakpoint
CREATE POLICY tenant_delete ON memberships FOR DELETE TO portal_tenant USING (org_id = portal_tenant_id());
--> statement-breakpoint
-- Children: their parent must be a row the tenant sees (the subqueries read under the parents' policies).
CREATE POLICY tenant_insert ON project_members FOR INSERT TO portal_tenant WITH CHECK (project_id IN (SELECT id FROM projects));
--> statement-breakpoint
CREATE POLICY tenant_update ON project_members FOR UPDATE TO portal_tenant USING (project_id IN (SELECT id FROM projects)) WITH CHECK (project_id IN (SELECT id FROM projects));
--> statement-breakpoint
CREATE POLICY tenant_delete ON project_members FOR DELETE TO portal_tenant USING (project_id IN (SELECT id FROM projects));
--> statement-breakpoint
CREATE POLICY tenant_insert ON application_lines FOR INSERT TO portal_tenant WITH CHECK (application_id IN (SELECT id FROM applications));
--> statement-breakpoint
CREATE POLICY tenant_update ON application_lines FOR UPDATE TO portal_tenant USING (application_id IN (SELECT id FROM applications)) WITH CHECK (application_id IN (SELECT id FROM applications));
--> statement-breakpoint
CREATE POLICY tenant_delete ON application_lines FOR DELETE TO portal_tenant USING (application_id IN (SELECT id FROM applications));
--> statement-breakpoint
CREATE POLICY tenant_insert ON decisions FOR INSERT TO portal_tenant WITH CHECK (application_id IN (SELECT id FROM applications));
--> statement-breakpoint
CREATE POLICY tenant_insert ON ledger_entries FOR INSERT TO portal_tenant WITH CHECK (allocation_id IN (SELECT id FROM allocations));
--> statement-breakpoint
CREATE POLICY tenant_insert ON job_events FOR INSERT TO portal_tenant WITH CHECK (job_id IN (SELECT id FROM jobs));
--> statement-breakpoint
CREATE POLICY tenant_insert ON audit_events FOR INSERT TO portal_tenant WITH CHECK (org_id = portal_tenant_id());
--> statement-breakpoint
-- Notices go to the tenant's own members or to centre staff (an application's reviewers), never to
-- anyone else; the tenant role cannot read them back.
CREATE POLICY tenant_insert ON notifications FOR INSERT TO portal_tenant WITH CHECK (user_id IN (SELECT user_id FROM memberships) OR portal_is_staff(user_id));
