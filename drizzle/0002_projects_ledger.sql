CREATE TYPE "public"."allocation_status" AS ENUM('active', 'expired', 'suspended');--> statement-breakpoint
CREATE TYPE "public"."application_kind" AS ENUM('new', 'top_up', 'renewal');--> statement-breakpoint
CREATE TYPE "public"."application_status" AS ENUM('draft', 'submitted', 'changes_requested', 'approved', 'rejected');--> statement-breakpoint
CREATE TYPE "public"."budget_unit" AS ENUM('gpu_seconds', 'cents');--> statement-breakpoint
CREATE TYPE "public"."decision_outcome" AS ENUM('approved', 'rejected', 'changes_requested');--> statement-breakpoint
CREATE TYPE "public"."ledger_kind" AS ENUM('grant', 'reserve', 'release', 'charge', 'adjust', 'refund', 'expire');--> statement-breakpoint
CREATE TYPE "public"."project_role" AS ENUM('pi', 'manager', 'member');--> statement-breakpoint
CREATE TYPE "public"."review_path" AS ENUM('instant', 'single', 'full');--> statement-breakpoint
CREATE TABLE "access_modes" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"max_gpu_seconds" bigint,
	"duration_days" integer NOT NULL,
	"review_path" "review_path" NOT NULL,
	"target_decision_working_days" integer NOT NULL,
	"sort_order" integer DEFAULT 0 NOT NULL,
	"active" boolean DEFAULT true NOT NULL
);
--> statement-breakpoint
CREATE TABLE "allocations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" uuid NOT NULL,
	"org_id" uuid NOT NULL,
	"resource_class_id" text,
	"application_id" uuid,
	"unit" "budget_unit" NOT NULL,
	"period_start" date NOT NULL,
	"period_end" date NOT NULL,
	"status" "allocation_status" DEFAULT 'active' NOT NULL,
	"status_reason" text,
	"max_gpus_at_once" integer,
	"max_walltime_seconds" integer,
	"max_queued_jobs" integer,
	"granted" bigint DEFAULT 0 NOT NULL,
	"charged" bigint DEFAULT 0 NOT NULL,
	"reserved" bigint DEFAULT 0 NOT NULL,
	"expired" bigint DEFAULT 0 NOT NULL,
	"overrun" bigint DEFAULT 0 NOT NULL,
	"noticed_permille" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "allocations_balance_ck" CHECK ("allocations"."charged" - "allocations"."overrun" + "allocations"."reserved" + "allocations"."expired" <= "allocations"."granted" and "allocations"."reserved" >= 0 and "allocations"."charged" >= 0),
	CONSTRAINT "allocations_period_ck" CHECK ("allocations"."period_end" > "allocations"."period_start")
);
--> statement-breakpoint
CREATE TABLE "application_lines" (
	"application_id" uuid NOT NULL,
	"resource_class_id" text NOT NULL,
	"requested_gpu_seconds" bigint NOT NULL,
	CONSTRAINT "application_lines_application_id_resource_class_id_pk" PRIMARY KEY("application_id","resource_class_id"),
	CONSTRAINT "application_lines_positive_ck" CHECK ("application_lines"."requested_gpu_seconds" > 0)
);
--> statement-breakpoint
CREATE TABLE "applications" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" uuid NOT NULL,
	"org_id" uuid NOT NULL,
	"access_mode_id" text NOT NULL,
	"kind" "application_kind" DEFAULT 'new' NOT NULL,
	"base_allocation_id" uuid,
	"status" "application_status" DEFAULT 'draft' NOT NULL,
	"period_start" date NOT NULL,
	"period_end" date NOT NULL,
	"justification" text NOT NULL,
	"created_by" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"submitted_at" timestamp with time zone,
	"decided_at" timestamp with time zone,
	CONSTRAINT "applications_period_ck" CHECK ("applications"."period_end" > "applications"."period_start")
);
--> statement-breakpoint
CREATE TABLE "decisions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"application_id" uuid NOT NULL,
	"reviewer_user_id" uuid,
	"outcome" "decision_outcome" NOT NULL,
	"comment" text NOT NULL,
	"granted_lines" jsonb,
	"decided_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ledger_entries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"allocation_id" uuid NOT NULL,
	"kind" "ledger_kind" NOT NULL,
	"amount" bigint NOT NULL,
	"overrun" bigint DEFAULT 0 NOT NULL,
	"job_id" uuid,
	"actor_user_id" uuid,
	"reason" text,
	"at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "notifications" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"message_key" text NOT NULL,
	"params" jsonb NOT NULL,
	"link" text,
	"read_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "project_members" (
	"project_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"role" "project_role" NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "project_members_project_id_user_id_pk" PRIMARY KEY("project_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "projects" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"title" text NOT NULL,
	"abstract" text NOT NULL,
	"field_of_science" text NOT NULL,
	"created_by" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "resource_classes" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"site_id" text NOT NULL,
	"gpu_model" text NOT NULL,
	"gpus_per_node" integer NOT NULL,
	"nodes" integer NOT NULL,
	"max_walltime_seconds" integer NOT NULL,
	"gpu_idle_power_w" integer NOT NULL,
	"gpu_max_power_w" integer NOT NULL,
	"node_base_power_w" integer NOT NULL,
	"peak_tflops" integer NOT NULL,
	"active" boolean DEFAULT true NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sites" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"country" char(2) NOT NULL,
	"in_eu" boolean NOT NULL,
	"pue_milli" integer NOT NULL,
	"grid_gco2_per_kwh" integer NOT NULL,
	"heat_reuse_permille" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tariffs" (
	"resource_class_id" text NOT NULL,
	"tenant_kind" "org_kind" NOT NULL,
	"cents_per_gpu_hour" integer NOT NULL,
	CONSTRAINT "tariffs_resource_class_id_tenant_kind_pk" PRIMARY KEY("resource_class_id","tenant_kind")
);
--> statement-breakpoint
ALTER TABLE "organisations" ADD COLUMN "monthly_cap_cents" bigint;--> statement-breakpoint
ALTER TABLE "allocations" ADD CONSTRAINT "allocations_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "allocations" ADD CONSTRAINT "allocations_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "allocations" ADD CONSTRAINT "allocations_resource_class_id_resource_classes_id_fk" FOREIGN KEY ("resource_class_id") REFERENCES "public"."resource_classes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "allocations" ADD CONSTRAINT "allocations_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "application_lines" ADD CONSTRAINT "application_lines_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "application_lines" ADD CONSTRAINT "application_lines_resource_class_id_resource_classes_id_fk" FOREIGN KEY ("resource_class_id") REFERENCES "public"."resource_classes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "applications" ADD CONSTRAINT "applications_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "applications" ADD CONSTRAINT "applications_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "applications" ADD CONSTRAINT "applications_access_mode_id_access_modes_id_fk" FOREIGN KEY ("access_mode_id") REFERENCES "public"."access_modes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "applications" ADD CONSTRAINT "applications_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "decisions" ADD CONSTRAINT "decisions_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "decisions" ADD CONSTRAINT "decisions_reviewer_user_id_users_id_fk" FOREIGN KEY ("reviewer_user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_allocation_id_allocations_id_fk" FOREIGN KEY ("allocation_id") REFERENCES "public"."allocations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_actor_user_id_users_id_fk" FOREIGN KEY ("actor_user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "project_members" ADD CONSTRAINT "project_members_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "project_members" ADD CONSTRAINT "project_members_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "projects" ADD CONSTRAINT "projects_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "projects" ADD CONSTRAINT "projects_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "resource_classes" ADD CONSTRAINT "resource_classes_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tariffs" ADD CONSTRAINT "tariffs_resource_class_id_resource_classes_id_fk" FOREIGN KEY ("resource_class_id") REFERENCES "public"."resource_classes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "allocations_project_idx" ON "allocations" USING btree ("project_id");--> statement-breakpoint
CREATE INDEX "allocations_org_idx" ON "allocations" USING btree ("org_id");--> statement-breakpoint
CREATE INDEX "applications_project_idx" ON "applications" USING btree ("project_id");--> statement-breakpoint
CREATE INDEX "applications_status_idx" ON "applications" USING btree ("status","submitted_at");--> statement-breakpoint
CREATE INDEX "decisions_application_idx" ON "decisions" USING btree ("application_id");--> statement-breakpoint
CREATE INDEX "ledger_entries_allocation_idx" ON "ledger_entries" USING btree ("allocation_id","at");--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_entries_job_kind_idx" ON "ledger_entries" USING btree ("job_id","kind") WHERE "ledger_entries"."job_id" is not null;--> statement-breakpoint
CREATE INDEX "notifications_user_idx" ON "notifications" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE INDEX "project_members_user_idx" ON "project_members" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "projects_org_idx" ON "projects" USING btree ("org_id");