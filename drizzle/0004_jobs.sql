CREATE TYPE "public"."job_kind" AS ENUM('training', 'fine_tuning', 'inference', 'batch');--> statement-breakpoint
CREATE TYPE "public"."job_state" AS ENUM('SUBMITTING', 'PENDING', 'RUNNING', 'COMPLETED', 'FAILED', 'TIMEOUT', 'CANCELLED', 'NODE_FAIL');--> statement-breakpoint
CREATE TABLE "cluster_samples" (
	"at" timestamp with time zone NOT NULL,
	"partition" text NOT NULL,
	"total_gpus" integer NOT NULL,
	"allocated_gpus" integer NOT NULL,
	"down_gpus" integer NOT NULL,
	"power_w" integer NOT NULL,
	"pending_jobs" integer NOT NULL,
	CONSTRAINT "cluster_samples_at_partition_pk" PRIMARY KEY("at","partition")
);
--> statement-breakpoint
CREATE TABLE "job_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"job_id" uuid NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"state" "job_state" NOT NULL,
	"message" text,
	"data" jsonb
);
--> statement-breakpoint
CREATE TABLE "jobs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"project_id" uuid NOT NULL,
	"allocation_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"idempotency_key" text NOT NULL,
	"name" text NOT NULL,
	"kind" "job_kind" NOT NULL,
	"resource_class_id" text NOT NULL,
	"site_id" text NOT NULL,
	"gpus" integer NOT NULL,
	"nodes" integer NOT NULL,
	"walltime_seconds" integer NOT NULL,
	"image" text NOT NULL,
	"command" text NOT NULL,
	"env" jsonb NOT NULL,
	"estimate" jsonb,
	"simulation" jsonb,
	"state" "job_state" DEFAULT 'SUBMITTING' NOT NULL,
	"pending_reason" text,
	"scheduler_job_id" text,
	"reserved_amount" bigint NOT NULL,
	"reserved_unit" "budget_unit" NOT NULL,
	"cents_per_gpu_hour" integer NOT NULL,
	"submitted_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"ended_at" timestamp with time zone,
	"exit_code" integer,
	"node_list" jsonb,
	"gpu_seconds" bigint,
	"energy_wh" bigint,
	"energy_measured" boolean,
	"cost_cents" bigint,
	"charged_amount" bigint,
	"settled_at" timestamp with time zone,
	"cancel_requested_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "jobs_shape_ck" CHECK ("jobs"."gpus" > 0 and "jobs"."nodes" > 0 and "jobs"."walltime_seconds" > 0)
);
--> statement-breakpoint
CREATE TABLE "sim_cluster_state" (
	"id" text PRIMARY KEY NOT NULL,
	"version" integer NOT NULL,
	"state" jsonb NOT NULL,
	"wall_anchor" timestamp with time zone NOT NULL,
	"sim_anchor_seconds" bigint NOT NULL,
	"speed" integer NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sim_finished_jobs" (
	"portal_job_id" text PRIMARY KEY NOT NULL,
	"cluster_id" text NOT NULL,
	"status" jsonb NOT NULL,
	"finished_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "job_events" ADD CONSTRAINT "job_events_job_id_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."jobs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_allocation_id_allocations_id_fk" FOREIGN KEY ("allocation_id") REFERENCES "public"."allocations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_resource_class_id_resource_classes_id_fk" FOREIGN KEY ("resource_class_id") REFERENCES "public"."resource_classes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "job_events_job_idx" ON "job_events" USING btree ("job_id","at");--> statement-breakpoint
CREATE UNIQUE INDEX "jobs_idempotency_idx" ON "jobs" USING btree ("user_id","idempotency_key");--> statement-breakpoint
CREATE INDEX "jobs_org_idx" ON "jobs" USING btree ("org_id","submitted_at");--> statement-breakpoint
CREATE INDEX "jobs_allocation_idx" ON "jobs" USING btree ("allocation_id","state");--> statement-breakpoint
CREATE INDEX "jobs_open_idx" ON "jobs" USING btree ("state") WHERE "jobs"."settled_at" is null;