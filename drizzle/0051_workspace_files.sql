-- hand-written: personal API tokens may hold the file scopes (issue #27): files:read lists and downloads
-- files in project workspaces, files:write uploads, renames and deletes them.
ALTER TABLE api_tokens DROP CONSTRAINT api_tokens_scopes_known;--> statement-breakpoint
ALTER TABLE api_tokens ADD CONSTRAINT api_tokens_scopes_known CHECK (scopes <@ ARRAY['read', 'jobs:write', 'applications:write', 'files:read', 'files:write', 'staff:read', 'staff:write']::text[] AND cardinality(scopes) > 0);
