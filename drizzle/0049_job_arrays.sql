CREATE TABLE "job_tasks" (
	"job_id" uuid NOT NULL,
	"task_index" integer NOT NULL,
	"scheduler_job_id" text NOT NULL,
	"state" "job_state" NOT NULL,
	"started_at" timestamp with time zone,
	"ended_at" timestamp with time zone,
	"exit_code" integer,
	"exit_signal" integer,
	"node_list" jsonb NOT NULL,
	"gpu_seconds" bigint NOT NULL,
	"energy_wh" bigint NOT NULL,
	"charged_amount" bigint,
	"cost_cents" bigint,
	"settled_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "job_tasks_job_id_task_index_pk" PRIMARY KEY("job_id","task_index"),
	CONSTRAINT "job_tasks_amounts_ck" CHECK ("job_tasks"."gpu_seconds" >= 0 and "job_tasks"."energy_wh" >= 0 and "job_tasks"."task_index" >= 0)
);
--> statement-breakpoint
DROP INDEX "ledger_entries_job_kind_idx";--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "array_spec" text;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "array_tasks" integer;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "array_throttle" integer;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "tasks_running" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "tasks_ended" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD COLUMN "task_index" integer;--> statement-breakpoint
ALTER TABLE "job_tasks" ADD CONSTRAINT "job_tasks_job_id_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."jobs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_entries_job_kind_idx" ON "ledger_entries" USING btree ("job_id","kind",coalesce("task_index", -1)) WHERE "ledger_entries"."job_id" is not null;--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_array_ck" CHECK (("jobs"."array_tasks" is null and "jobs"."tasks_running" = 0 and "jobs"."tasks_ended" = 0) or ("jobs"."array_tasks" between 1 and 10000 and "jobs"."tasks_running" >= 0 and "jobs"."tasks_ended" >= 0 and "jobs"."tasks_running" + "jobs"."tasks_ended" <= "jobs"."array_tasks"));--> statement-breakpoint
-- hand-written:
-- A job array's tasks, behind the wall like job_events (drizzle/0009, 0020, 0021): the worker writes
-- them through service_rows; a tenant's calls read the tasks of the jobs they may read.
GRANT SELECT ON job_tasks TO portal_tenant;
--> statement-breakpoint
ALTER TABLE job_tasks ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE job_tasks FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY service_rows ON job_tasks FOR ALL TO portal_service USING (true) WITH CHECK (true);
--> statement-breakpoint
CREATE POLICY tenant_rows ON job_tasks FOR SELECT TO portal_tenant USING (EXISTS (SELECT 1 FROM jobs WHERE jobs.id = job_tasks.job_id));
--> statement-breakpoint
-- What a job has in flight (drizzle/0042), now also for a job array: its GPUs are those of the tasks that
-- may run at once (the open tasks, at most the throttle), its queued count the tasks still waiting. One
-- job counts as before: its GPUs, and one queued while SUBMITTING or PENDING.
-- One open job's share of its allocation's figures in flight (an unsettled job SUBMITTING, PENDING or RUNNING).
CREATE FUNCTION jobs_in_flight_gpus(gpus integer, array_tasks integer, array_throttle integer, tasks_ended integer) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN array_tasks IS NULL THEN gpus::bigint
              ELSE gpus::bigint * least(array_tasks - tasks_ended, coalesce(array_throttle, array_tasks)) END
$$;
--> statement-breakpoint
CREATE FUNCTION jobs_in_flight_queued(state job_state, array_tasks integer, tasks_running integer, tasks_ended integer) RETURNS integer
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN array_tasks IS NULL THEN (state IN ('SUBMITTING', 'PENDING'))::integer
              ELSE array_tasks - tasks_running - tasks_ended END
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION jobs_in_flight_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  ids uuid[];
  gpus bigint[];
  queued integer[];
BEGIN
  -- Each row's share, + for the rows as they are now, - for the rows as they were; what cancels out is no change.
  IF TG_OP = 'INSERT' THEN
    SELECT array_agg(d.allocation_id ORDER BY d.allocation_id), array_agg(d.g ORDER BY d.allocation_id), array_agg(d.q ORDER BY d.allocation_id) INTO ids, gpus, queued
    FROM (SELECT allocation_id, sum(jobs_in_flight_gpus(j.gpus, j.array_tasks, j.array_throttle, j.tasks_ended))::bigint AS g,
                 sum(jobs_in_flight_queued(j.state, j.array_tasks, j.tasks_running, j.tasks_ended))::integer AS q
          FROM new_jobs j WHERE j.settled_at IS NULL AND j.state IN ('SUBMITTING', 'PENDING', 'RUNNING') GROUP BY allocation_id) d;
  ELSIF TG_OP = 'DELETE' THEN
    SELECT array_agg(d.allocation_id ORDER BY d.allocation_id), array_agg(d.g ORDER BY d.allocation_id), array_agg(d.q ORDER BY d.allocation_id) INTO ids, gpus, queued
    FROM (SELECT allocation_id, -sum(jobs_in_flight_gpus(j.gpus, j.array_tasks, j.array_throttle, j.tasks_ended))::bigint AS g,
                 -sum(jobs_in_flight_queued(j.state, j.array_tasks, j.tasks_running, j.tasks_ended))::integer AS q
          FROM old_jobs j WHERE j.settled_at IS NULL AND j.state IN ('SUBMITTING', 'PENDING', 'RUNNING') GROUP BY allocation_id) d;
  ELSE
    SELECT array_agg(d.allocation_id ORDER BY d.allocation_id), array_agg(d.g ORDER BY d.allocation_id), array_agg(d.q ORDER BY d.allocation_id) INTO ids, gpus, queued
    FROM (SELECT c.allocation_id, sum(c.g)::bigint AS g, sum(c.q)::integer AS q
          FROM (SELECT j.allocation_id, jobs_in_flight_gpus(j.gpus, j.array_tasks, j.array_throttle, j.tasks_ended) AS g,
                       jobs_in_flight_queued(j.state, j.array_tasks, j.tasks_running, j.tasks_ended) AS q
                FROM new_jobs j WHERE j.settled_at IS NULL AND j.state IN ('SUBMITTING', 'PENDING', 'RUNNING')
                UNION ALL
                SELECT j.allocation_id, -jobs_in_flight_gpus(j.gpus, j.array_tasks, j.array_throttle, j.tasks_ended),
                       -jobs_in_flight_queued(j.state, j.array_tasks, j.tasks_running, j.tasks_ended)
                FROM old_jobs j WHERE j.settled_at IS NULL AND j.state IN ('SUBMITTING', 'PENDING', 'RUNNING')) c
          GROUP BY c.allocation_id HAVING sum(c.g) <> 0 OR sum(c.q) <> 0) d;
  END IF;
  IF ids IS NOT NULL THEN
    PERFORM allocations_add_in_flight(ids, gpus, queued);
  END IF;
  RETURN NULL;
END $$;
