CREATE TABLE "outside_jobs" (
	"cluster" text NOT NULL,
	"scheduler_job_id" text NOT NULL,
	"org_id" uuid NOT NULL,
	"project_id" uuid NOT NULL,
	"allocation_id" uuid,
	"name" text NOT NULL,
	"partition" text NOT NULL,
	"resource_class_id" text,
	"scheduler_user" text,
	"state" "job_state" NOT NULL,
	"started_at" timestamp with time zone,
	"ended_at" timestamp with time zone,
	"gpu_seconds" bigint NOT NULL,
	"charged_amount" bigint DEFAULT 0 NOT NULL,
	"imported_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "outside_jobs_cluster_scheduler_job_id_pk" PRIMARY KEY("cluster","scheduler_job_id")
);
--> statement-breakpoint
ALTER TABLE "outside_jobs" ADD CONSTRAINT "outside_jobs_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "outside_jobs" ADD CONSTRAINT "outside_jobs_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "outside_jobs" ADD CONSTRAINT "outside_jobs_allocation_id_allocations_id_fk" FOREIGN KEY ("allocation_id") REFERENCES "public"."allocations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "outside_jobs_project_idx" ON "outside_jobs" USING btree ("project_id","ended_at");--> statement-breakpoint
-- hand-written:
-- Tenant-owned rows behind the wall (drizzle/0009, 0018): the worker writes them through service_rows;
-- a tenant's own calls may read their organisation's rows only.
GRANT SELECT ON outside_jobs TO portal_tenant;
--> statement-breakpoint
ALTER TABLE outside_jobs ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE outside_jobs FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY service_rows ON outside_jobs FOR ALL TO portal_service USING (true) WITH CHECK (true);
--> statement-breakpoint
CREATE POLICY tenant_rows ON outside_jobs FOR SELECT TO portal_tenant USING (org_id = portal_tenant_id());
--> statement-breakpoint
ALTER TABLE outside_jobs ADD CONSTRAINT outside_jobs_amounts CHECK (gpu_seconds >= 0 AND charged_amount >= 0);
