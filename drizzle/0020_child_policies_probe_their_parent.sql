-- A child row's policy asked `parent_id IN (SELECT id FROM parent)`: Postgres evaluates that as a hashed
-- subplan over every parent row the tenant sees, once per statement, so inserting one job event read
-- all of the tenant's jobs (250 ms at 150,000 jobs; submissions slowed as the queue grew). Asked as a
-- correlated EXISTS it is one probe of the parent's primary key per row (the parent's own policy still
-- applies inside it). Same rule, same rows.
ALTER POLICY tenant_rows ON job_events USING (EXISTS (SELECT 1 FROM jobs WHERE jobs.id = job_events.job_id));
--> statement-breakpoint
ALTER POLICY tenant_insert ON job_events WITH CHECK (EXISTS (SELECT 1 FROM jobs WHERE jobs.id = job_events.job_id));
--> statement-breakpoint
ALTER POLICY tenant_rows ON ledger_entries USING (EXISTS (SELECT 1 FROM allocations WHERE allocations.id = ledger_entries.allocation_id));
--> statement-breakpoint
ALTER POLICY tenant_insert ON ledger_entries WITH CHECK (EXISTS (SELECT 1 FROM allocations WHERE allocations.id = ledger_entries.allocation_id));
--> statement-breakpoint
ALTER POLICY tenant_rows ON project_members USING (EXISTS (SELECT 1 FROM projects WHERE projects.id = project_members.project_id));
--> statement-breakpoint
ALTER POLICY tenant_insert ON project_members WITH CHECK (EXISTS (SELECT 1 FROM projects WHERE projects.id = project_members.project_id));
--> statement-breakpoint
ALTER POLICY tenant_update ON project_members USING (EXISTS (SELECT 1 FROM projects WHERE projects.id = project_members.project_id)) WITH CHECK (EXISTS (SELECT 1 FROM projects WHERE projects.id = project_members.project_id));
--> statement-breakpoint
ALTER POLICY tenant_delete ON project_members USING (EXISTS (SELECT 1 FROM projects WHERE projects.id = project_members.project_id));
--> statement-breakpoint
ALTER POLICY tenant_rows ON application_lines USING (EXISTS (SELECT 1 FROM applications WHERE applications.id = application_lines.application_id));
--> statement-breakpoint
ALTER POLICY tenant_insert ON application_lines WITH CHECK (EXISTS (SELECT 1 FROM applications WHERE applications.id = application_lines.application_id));
--> statement-breakpoint
ALTER POLICY tenant_update ON application_lines USING (EXISTS (SELECT 1 FROM applications WHERE applications.id = application_lines.application_id)) WITH CHECK (EXISTS (SELECT 1 FROM applications WHERE applications.id = application_lines.application_id));
--> statement-breakpoint
ALTER POLICY tenant_delete ON application_lines USING (EXISTS (SELECT 1 FROM applications WHERE applications.id = application_lines.application_id));
--> statement-breakpoint
ALTER POLICY tenant_rows ON decisions USING (EXISTS (SELECT 1 FROM applications WHERE applications.id = decisions.application_id));
--> statement-breakpoint
ALTER POLICY tenant_insert ON decisions WITH CHECK (EXISTS (SELECT 1 FROM applications WHERE applications.id = decisions.application_id));
--> statement-breakpoint
ALTER POLICY tenant_rows ON invoice_lines USING (EXISTS (SELECT 1 FROM invoices WHERE invoices.id = invoice_lines.invoice_id));
