-- Child rows of small parents go back to `parent_id IN (SELECT id FROM parent)` (drizzle/0009, 0018):
-- a tenant has tens of projects, applications, allocations and invoices, so the hash of them is built
-- at once and every child row is one hash probe, where the correlated EXISTS of drizzle/0020 cost an
-- index lookup per row (a dashboard reading an allocation's thousands of ledger entries did thousands).
-- Job events keep the EXISTS: a tenant has up to hundreds of thousands of jobs, whose hash per
-- statement is what 0020 removed.
ALTER POLICY tenant_rows ON ledger_entries USING (allocation_id IN (SELECT id FROM allocations));
--> statement-breakpoint
ALTER POLICY tenant_insert ON ledger_entries WITH CHECK (allocation_id IN (SELECT id FROM allocations));
--> statement-breakpoint
ALTER POLICY tenant_rows ON project_members USING (project_id IN (SELECT id FROM projects));
--> statement-breakpoint
ALTER POLICY tenant_insert ON project_members WITH CHECK (project_id IN (SELECT id FROM projects));
--> statement-breakpoint
ALTER POLICY tenant_update ON project_members USING (project_id IN (SELECT id FROM projects)) WITH CHECK (project_id IN (SELECT id FROM projects));
--> statement-breakpoint
ALTER POLICY tenant_delete ON project_members USING (project_id IN (SELECT id FROM projects));
--> statement-breakpoint
ALTER POLICY tenant_rows ON application_lines USING (application_id IN (SELECT id FROM applications));
--> statement-breakpoint
ALTER POLICY tenant_insert ON application_lines WITH CHECK (application_id IN (SELECT id FROM applications));
--> statement-breakpoint
ALTER POLICY tenant_update ON application_lines USING (application_id IN (SELECT id FROM applications)) WITH CHECK (application_id IN (SELECT id FROM applications));
--> statement-breakpoint
ALTER POLICY tenant_delete ON application_lines USING (application_id IN (SELECT id FROM applications));
--> statement-breakpoint
ALTER POLICY tenant_rows ON decisions USING (application_id IN (SELECT id FROM applications));
--> statement-breakpoint
ALTER POLICY tenant_insert ON decisions WITH CHECK (application_id IN (SELECT id FROM applications));
--> statement-breakpoint
ALTER POLICY tenant_rows ON invoice_lines USING (invoice_id IN (SELECT id FROM invoices));
