CREATE TABLE "centre_days" (
	"day" date NOT NULL,
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
	CONSTRAINT "centre_days_day_resource_class_id_org_kind_pk" PRIMARY KEY("day","resource_class_id","org_kind")
);
--> statement-breakpoint
CREATE TABLE "centre_tenant_days" (
	"day" date NOT NULL,
	"resource_class_id" text NOT NULL,
	"org_id" uuid NOT NULL,
	"jobs" integer NOT NULL,
	"gpu_seconds" bigint NOT NULL,
	"cost_cents" bigint NOT NULL,
	"energy_wh" bigint NOT NULL,
	"facility_energy_wh" bigint NOT NULL,
	"heat_reused_wh" bigint NOT NULL,
	"co2e_grams" bigint NOT NULL,
	CONSTRAINT "centre_tenant_days_day_resource_class_id_org_id_pk" PRIMARY KEY("day","resource_class_id","org_id")
);
--> statement-breakpoint
ALTER TABLE "centre_days" ADD CONSTRAINT "centre_days_resource_class_id_resource_classes_id_fk" FOREIGN KEY ("resource_class_id") REFERENCES "public"."resource_classes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "centre_tenant_days" ADD CONSTRAINT "centre_tenant_days_resource_class_id_resource_classes_id_fk" FOREIGN KEY ("resource_class_id") REFERENCES "public"."resource_classes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "centre_tenant_days" ADD CONSTRAINT "centre_tenant_days_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- hand-written:
-- The wait buckets of core/usage/wait-buckets.ts (waitBucket): exact below 128 s, then 32 per doubling.
CREATE FUNCTION portal_wait_bucket(seconds bigint) RETURNS integer LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
  w bigint := least(greatest(seconds, 0), 2147483647);
  e integer := 7;
BEGIN
  IF w < 128 THEN RETURN w::integer; END IF;
  WHILE w >= (1::bigint << (e + 1)) LOOP e := e + 1; END LOOP;
  RETURN 128 + (e - 7) * 32 + ((w - (1::bigint << e)) >> (e - 5))::integer;
END $$;
--> statement-breakpoint
-- Two bucket → count objects added key by key (a settling batch's waits onto a day's).
CREATE FUNCTION portal_add_counts(a jsonb, b jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(jsonb_object_agg(k, n), '{}'::jsonb)
  FROM (SELECT k, sum(v::bigint) AS n FROM (SELECT * FROM jsonb_each_text(coalesce(a, '{}'::jsonb)) UNION ALL SELECT * FROM jsonb_each_text(coalesce(b, '{}'::jsonb))) e(k, v) GROUP BY k) s
$$;
--> statement-breakpoint
-- Centre internals behind the wall (as what_if_runs, drizzle/0037): only the portal's own connection reads and writes them.
ALTER TABLE centre_days ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE centre_days FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY service_rows ON centre_days FOR ALL TO portal_service USING (true) WITH CHECK (true);
--> statement-breakpoint
ALTER TABLE centre_tenant_days ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE centre_tenant_days FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY service_rows ON centre_tenant_days FOR ALL TO portal_service USING (true) WITH CHECK (true);
--> statement-breakpoint
-- A centre that has history fills them from it (as `npm run usage:rebuild` does, server/services/usage/usage.ts).
INSERT INTO centre_tenant_days (day, resource_class_id, org_id, jobs, gpu_seconds, cost_cents, energy_wh, facility_energy_wh, heat_reused_wh, co2e_grams)
SELECT day, resource_class_id, org_id, sum(jobs)::int, sum(gpu_seconds), sum(cost_cents), sum(energy_wh), sum(facility_energy_wh), sum(heat_reused_wh), sum(co2e_grams)
FROM usage_rollups GROUP BY 1, 2, 3;
--> statement-breakpoint
INSERT INTO centre_days (day, resource_class_id, org_kind, jobs, gpu_seconds, cost_cents, energy_wh, facility_energy_wh, heat_reused_wh, co2e_grams, started_jobs, wait_seconds, wait_counts)
SELECT r.day, r.resource_class_id, o.kind, sum(r.jobs)::int, sum(r.gpu_seconds), sum(r.cost_cents), sum(r.energy_wh), sum(r.facility_energy_wh), sum(r.heat_reused_wh), sum(r.co2e_grams), 0, 0, '{}'::jsonb
FROM usage_rollups r JOIN organisations o ON o.id = r.org_id GROUP BY 1, 2, 3;
--> statement-breakpoint
WITH waits AS (
  SELECT (j.started_at AT TIME ZONE 'UTC')::date AS day, j.resource_class_id, o.kind, portal_wait_bucket(j.wait_seconds) AS bucket, count(*) AS n, sum(j.wait_seconds) AS seconds
  FROM jobs j JOIN organisations o ON o.id = j.org_id
  WHERE j.settled_at IS NOT NULL AND j.started_at IS NOT NULL AND j.wait_seconds IS NOT NULL
  GROUP BY 1, 2, 3, 4
)
INSERT INTO centre_days (day, resource_class_id, org_kind, jobs, gpu_seconds, cost_cents, energy_wh, facility_energy_wh, heat_reused_wh, co2e_grams, started_jobs, wait_seconds, wait_counts)
SELECT day, resource_class_id, kind, 0, 0, 0, 0, 0, 0, 0, sum(n)::int, sum(seconds), jsonb_object_agg(bucket::text, n)
FROM waits GROUP BY 1, 2, 3
ON CONFLICT (day, resource_class_id, org_kind) DO UPDATE SET started_jobs = excluded.started_jobs, wait_seconds = excluded.wait_seconds, wait_counts = excluded.wait_counts;
