ALTER TABLE "jobs" ADD COLUMN "served_model" text;--> statement-breakpoint
-- Inference services from before (issue #29) serve the model named after the job, as a service submitted
-- without a model name does now (server/core/jobs/inference.ts defaultServedModel).
UPDATE "jobs" SET "served_model" = coalesce(nullif(regexp_replace(left(regexp_replace(lower("name"), '[^a-z0-9._-]+', '-', 'g'), 64), '^[-._]+|[-._]+$', '', 'g'), ''), 'model') WHERE "kind" = 'inference';--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_served_model_ck" CHECK (("jobs"."served_model" is null) = ("jobs"."kind" <> 'inference'));
--> statement-breakpoint
-- Tokens may carry the scope `inference` (the OpenAI-compatible gateway, issue #29; server/core/rest/scopes.ts).
ALTER TABLE api_tokens DROP CONSTRAINT api_tokens_scopes_known;--> statement-breakpoint
ALTER TABLE api_tokens ADD CONSTRAINT api_tokens_scopes_known CHECK (scopes <@ ARRAY['read', 'jobs:write', 'applications:write', 'files:read', 'files:write', 'inference', 'staff:read', 'staff:write']::text[] AND cardinality(scopes) > 0);
