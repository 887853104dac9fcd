CREATE TABLE "centre_months" (
	"month" date NOT NULL,
	"resource_class_id" text NOT NULL,
	"org_kind" "org_kind" NOT NULL,
	"jobs" integer NOT NULL,
	"gpu_seconds" bigint NOT NULL,
	"cost_cents" bigint NOT NULL,
	"energy_wh" bigint NOT NULL,
	"facility_energy_wh" bigint NOT NULL,
	"heat_reused_wh" bigint NOT NULL,
	"co2e_grams" bigint NOT NULL,
	"started_jobs" integer NOT NULL,
	"wait_seconds" bigint NOT NULL,
	"wait_counts" jsonb NOT NULL,
	CONSTRAINT "centre_months_month_resource_class_id_org_kind_pk" PRIMARY KEY("month","resource_class_id","org_kind"),
	CONSTRAINT "centre_months_first_day" CHECK (extract(day from "centre_months"."month") = 1)
);
--> statement-breakpoint
CREATE TABLE "centre_tenant_months" (
	"month" date NOT NULL,
	"resource_class_id" text NOT NULL,
	"org_id" uuid NOT NULL,
	"jobs" integer NOT NULL,
	"gpu_seconds" bigint NOT NULL,
	"cost_cents" bigint NOT NULL,
	"energy_wh" bigint NOT NULL,
	"facility_energy_wh" bigint NOT NULL,
	"heat_reused_wh" bigint NOT NULL,
	"co2e_grams" bigint NOT NULL,
	CONSTRAINT "centre_tenant_months_month_resource_class_id_org_id_pk" PRIMARY KEY("month","resource_class_id","org_id"),
	CONSTRAINT "centre_tenant_months_first_day" CHECK (extract(day from "centre_tenant_months"."month") = 1)
);
--> statement-breakpoint
ALTER TABLE "centre_months" ADD CONSTRAINT "centre_months_resource_class_id_resource_classes_id_fk" FOREIGN KEY ("resource_class_id") REFERENCES "public"."resource_classes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "centre_tenant_months" ADD CONSTRAINT "centre_tenant_months_resource_class_id_resource_classes_id_fk" FOREIGN KEY ("resource_class_id") REFERENCES "public"."resource_classes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "centre_tenant_months" ADD CONSTRAINT "centre_tenant_months_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- hand-written:
-- Centre internals behind the wall (as centre_days, drizzle/0061).
ALTER TABLE centre_months ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE centre_months FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY service_rows ON centre_months FOR ALL TO portal_service USING (true) WITH CHECK (true);
--> statement-breakpoint
ALTER TABLE centre_tenant_months ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE centre_tenant_months FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY service_rows ON centre_tenant_months FOR ALL TO portal_service USING (true) WITH CHECK (true);
--> statement-breakpoint
-- Filled from the day rows (as `npm run usage:rebuild` does, server/services/usage/usage.ts).
INSERT INTO centre_tenant_months (month, resource_class_id, org_id, jobs, gpu_seconds, cost_cents, energy_wh, facility_energy_wh, heat_reused_wh, co2e_grams)
SELECT date_trunc('month', day)::date, resource_class_id, org_id, sum(jobs)::int, sum(gpu_seconds), sum(cost_cents), sum(energy_wh), sum(facility_energy_wh), sum(heat_reused_wh), sum(co2e_grams)
FROM centre_tenant_days GROUP BY 1, 2, 3;
--> statement-breakpoint
WITH sums AS (
  SELECT date_trunc('month', day)::date AS month, resource_class_id, org_kind, sum(jobs)::int AS jobs, sum(gpu_seconds) AS gpu_seconds, sum(cost_cents) AS cost_cents, sum(energy_wh) AS energy_wh,
         sum(facility_energy_wh) AS facility_energy_wh, sum(heat_reused_wh) AS heat_reused_wh, sum(co2e_grams) AS co2e_grams, sum(started_jobs)::int AS started_jobs, sum(wait_seconds) AS wait_seconds
  FROM centre_days GROUP BY 1, 2, 3
), counts AS (
  SELECT date_trunc('month', d.day)::date AS month, d.resource_class_id, d.org_kind, e.key, sum(e.value::bigint) AS n
  FROM centre_days d CROSS JOIN LATERAL jsonb_each_text(d.wait_counts) e GROUP BY 1, 2, 3, 4
), merged AS (
  SELECT month, resource_class_id, org_kind, jsonb_object_agg(key, n) AS wait_counts FROM counts GROUP BY 1, 2, 3
)
INSERT INTO centre_months (month, resource_class_id, org_kind, jobs, gpu_seconds, cost_cents, energy_wh, facility_energy_wh, heat_reused_wh, co2e_grams, started_jobs, wait_seconds, wait_counts)
SELECT s.month, s.resource_class_id, s.org_kind, s.jobs, s.gpu_seconds, s.cost_cents, s.energy_wh, s.facility_energy_wh, s.heat_reused_wh, s.co2e_grams, s.started_jobs, s.wait_seconds, coalesce(m.wait_counts, '{}'::jsonb)
FROM sums s LEFT JOIN merged m USING (month, resource_class_id, org_kind);
