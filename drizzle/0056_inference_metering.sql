CREATE TYPE "public"."model_call_status" AS ENUM('open', 'settled', 'lost');--> statement-breakpoint
CREATE TABLE "model_calls" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"project_id" uuid NOT NULL,
	"allocation_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"token_id" uuid,
	"request_id" text NOT NULL,
	"model" text NOT NULL,
	"endpoint" text NOT NULL,
	"shared" boolean DEFAULT false NOT NULL,
	"service_job_id" uuid,
	"site_id" text,
	"resource_class_id" text,
	"unit" "budget_unit" NOT NULL,
	"input_micro_per_token" bigint NOT NULL,
	"output_micro_per_token" bigint NOT NULL,
	"input_cents_per_m_tokens" integer NOT NULL,
	"output_cents_per_m_tokens" integer NOT NULL,
	"uwh_per_token" integer DEFAULT 0 NOT NULL,
	"reserved_amount" bigint NOT NULL,
	"status" "model_call_status" DEFAULT 'open' NOT NULL,
	"http_status" integer,
	"aborted" boolean DEFAULT false NOT NULL,
	"prompt_tokens" integer DEFAULT 0 NOT NULL,
	"completion_tokens" integer DEFAULT 0 NOT NULL,
	"cost_micro" bigint DEFAULT 0 NOT NULL,
	"charged_amount" bigint DEFAULT 0 NOT NULL,
	"energy_uwh" bigint DEFAULT 0 NOT NULL,
	"co2e_ug" bigint DEFAULT 0 NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"ended_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "allocations" ADD COLUMN "inference_micro" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "project_id" uuid;--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD COLUMN "model_call_id" uuid;--> statement-breakpoint
ALTER TABLE "model_calls" ADD CONSTRAINT "model_calls_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "model_calls" ADD CONSTRAINT "model_calls_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "model_calls" ADD CONSTRAINT "model_calls_allocation_id_allocations_id_fk" FOREIGN KEY ("allocation_id") REFERENCES "public"."allocations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "model_calls" ADD CONSTRAINT "model_calls_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "model_calls" ADD CONSTRAINT "model_calls_token_id_api_tokens_id_fk" FOREIGN KEY ("token_id") REFERENCES "public"."api_tokens"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "model_calls_org_idx" ON "model_calls" USING btree ("org_id","started_at");--> statement-breakpoint
CREATE INDEX "model_calls_allocation_idx" ON "model_calls" USING btree ("allocation_id","ended_at");--> statement-breakpoint
CREATE INDEX "model_calls_open_idx" ON "model_calls" USING btree ("started_at") WHERE "model_calls"."status" = 'open';--> statement-breakpoint
ALTER TABLE "api_tokens" ADD CONSTRAINT "api_tokens_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_entries_model_call_kind_idx" ON "ledger_entries" USING btree ("model_call_id","kind") WHERE "ledger_entries"."model_call_id" is not null;--> statement-breakpoint
-- Model calls (issue #29) are written by the gateway on the portal's own connection; a tenant reads its own.
GRANT SELECT ON model_calls TO portal_tenant;--> statement-breakpoint
ALTER TABLE model_calls ENABLE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE model_calls FORCE ROW LEVEL SECURITY;--> statement-breakpoint
CREATE POLICY service_rows ON model_calls FOR ALL TO portal_service USING (true) WITH CHECK (true);--> statement-breakpoint
CREATE POLICY tenant_rows ON model_calls FOR SELECT TO portal_tenant USING (org_id = portal_tenant_id());
--> statement-breakpoint
ALTER TABLE model_calls ADD CONSTRAINT model_calls_amounts CHECK (reserved_amount >= 0 AND charged_amount >= 0 AND cost_micro >= 0 AND prompt_tokens >= 0 AND completion_tokens >= 0 AND energy_uwh >= 0 AND co2e_ug >= 0 AND input_micro_per_token >= 0 AND output_micro_per_token >= 0);--> statement-breakpoint
ALTER TABLE allocations ADD CONSTRAINT allocations_inference_micro_ck CHECK (inference_micro >= 0);
