-- The portal's own path (role portal_service: staff, the worker, sign-up, the scheduler hand-over)
-- passes the FORCEd policies by an explicit grant of every row. 0018 granted them only while no tenant
-- was set: `portal_tenant_id() IS NULL`, OR'd per row with the tenant policies the owner also holds
-- (it is a member of portal_tenant to switch to it). The planner cannot estimate that test: it took
-- the owner's every read of a tenant-owned table for a handful of rows and chose plans to match (the
-- reconciler's batch update of 1,000 jobs became a nested loop over every open job: 1 s instead of
-- 45 ms). `true` folds away at planning time. Tenant calls are unaffected: they run as portal_tenant,
-- which is not a member of portal_service, with the tenant set (server/api/tenant-transaction.ts).
DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['organisations', 'memberships', 'invitations', 'projects', 'project_members', 'applications', 'application_lines', 'decisions', 'allocations', 'ledger_entries', 'jobs', 'job_events', 'usage_rollups', 'invoices', 'invoice_lines', 'credit_notes', 'audit_events', 'notifications'] LOOP
    EXECUTE format('ALTER POLICY service_rows ON %I USING (true) WITH CHECK (true)', t);
  END LOOP;
END
$$;
