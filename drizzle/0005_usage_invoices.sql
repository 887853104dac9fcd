CREATE TABLE "credit_notes" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"number" text NOT NULL,
	"invoice_id" uuid NOT NULL,
	"org_id" uuid NOT NULL,
	"issued_at" timestamp with time zone DEFAULT now() NOT NULL,
	"reason" text NOT NULL,
	"issued_by" uuid NOT NULL,
	"net_cents" bigint NOT NULL,
	"vat_cents" bigint NOT NULL,
	"gross_cents" bigint NOT NULL,
	CONSTRAINT "credit_notes_number_unique" UNIQUE("number")
);
--> statement-breakpoint
CREATE TABLE "document_counters" (
	"series" text PRIMARY KEY NOT NULL,
	"last_value" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "invoice_lines" (
	"invoice_id" uuid NOT NULL,
	"line_no" integer NOT NULL,
	"resource_class_id" text NOT NULL,
	"description" text NOT NULL,
	"jobs" integer NOT NULL,
	"gpu_seconds" bigint NOT NULL,
	"unit_price_cents_per_gpu_hour" integer NOT NULL,
	"net_cents" bigint NOT NULL,
	CONSTRAINT "invoice_lines_invoice_id_line_no_pk" PRIMARY KEY("invoice_id","line_no")
);
--> statement-breakpoint
CREATE TABLE "invoices" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"number" text NOT NULL,
	"org_id" uuid NOT NULL,
	"period_month" date NOT NULL,
	"issued_at" timestamp with time zone DEFAULT now() NOT NULL,
	"recipient" jsonb NOT NULL,
	"net_cents" bigint NOT NULL,
	"vat_permille" integer NOT NULL,
	"vat_cents" bigint NOT NULL,
	"gross_cents" bigint NOT NULL,
	CONSTRAINT "invoices_number_unique" UNIQUE("number")
);
--> statement-breakpoint
CREATE TABLE "usage_rollups" (
	"day" date NOT NULL,
	"org_id" uuid NOT NULL,
	"project_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"resource_class_id" text NOT NULL,
	"kind" "job_kind" NOT NULL,
	"jobs" integer NOT NULL,
	"gpu_seconds" bigint NOT NULL,
	"wait_seconds" bigint NOT NULL,
	"started_jobs" integer NOT NULL,
	"cost_cents" bigint NOT NULL,
	"energy_wh" bigint NOT NULL,
	"facility_energy_wh" bigint NOT NULL,
	"heat_reused_wh" bigint NOT NULL,
	"co2e_grams" bigint NOT NULL,
	CONSTRAINT "usage_rollups_org_id_day_project_id_user_id_resource_class_id_kind_pk" PRIMARY KEY("org_id","day","project_id","user_id","resource_class_id","kind")
);
--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "facility_energy_wh" bigint;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "heat_reused_wh" bigint;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "co2e_grams" bigint;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "wait_seconds" integer;--> statement-breakpoint
ALTER TABLE "credit_notes" ADD CONSTRAINT "credit_notes_invoice_id_invoices_id_fk" FOREIGN KEY ("invoice_id") REFERENCES "public"."invoices"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "credit_notes" ADD CONSTRAINT "credit_notes_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "credit_notes" ADD CONSTRAINT "credit_notes_issued_by_users_id_fk" FOREIGN KEY ("issued_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invoice_lines" ADD CONSTRAINT "invoice_lines_invoice_id_invoices_id_fk" FOREIGN KEY ("invoice_id") REFERENCES "public"."invoices"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invoice_lines" ADD CONSTRAINT "invoice_lines_resource_class_id_resource_classes_id_fk" FOREIGN KEY ("resource_class_id") REFERENCES "public"."resource_classes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "usage_rollups" ADD CONSTRAINT "usage_rollups_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "usage_rollups" ADD CONSTRAINT "usage_rollups_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "usage_rollups" ADD CONSTRAINT "usage_rollups_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "usage_rollups" ADD CONSTRAINT "usage_rollups_resource_class_id_resource_classes_id_fk" FOREIGN KEY ("resource_class_id") REFERENCES "public"."resource_classes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "invoices_org_month_idx" ON "invoices" USING btree ("org_id","period_month");--> statement-breakpoint
CREATE INDEX "usage_rollups_day_idx" ON "usage_rollups" USING btree ("day");