ALTER TABLE "allocations" ADD COLUMN "active_gpus" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "allocations" ADD COLUMN "queued_jobs" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "allocations" ADD CONSTRAINT "allocations_in_flight_ck" CHECK ("allocations"."active_gpus" >= 0 and "allocations"."queued_jobs" >= 0);--> statement-breakpoint
-- hand-written:
-- allocations.active_gpus and queued_jobs: what the allocation has in flight, the figures admission
-- checks against max_gpus_at_once and max_queued_jobs. A job is in flight while it is unsettled and
-- SUBMITTING, PENDING or RUNNING (its GPUs count), and queued while SUBMITTING or PENDING: the definition
-- submission counted the queue by before (jobs.ts, activeUsage). Statement triggers on jobs keep them in
-- the statement that inserts, moves, settles or deletes jobs, however it is written: one update per
-- allocation and statement (a reconciler batch of a thousand starts is one), nothing when a statement
-- changes nothing in flight (a hand-over: SUBMITTING to PENDING). Allocations are locked in id order,
-- the lock order; the services lock them before any job row (server/services/ledger/README.md), so
-- here they are normally held already.
CREATE FUNCTION allocations_add_in_flight(ids uuid[], gpus bigint[], queued integer[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM allocations WHERE id = ANY (ids) ORDER BY id FOR NO KEY UPDATE;
  UPDATE allocations a SET active_gpus = a.active_gpus + d.gpus, queued_jobs = a.queued_jobs + d.queued
  FROM unnest(ids, gpus, queued) AS d(id, gpus, queued)
  WHERE a.id = d.id;
END $$;
--> statement-breakpoint
CREATE FUNCTION jobs_in_flight_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  ids uuid[];
  gpus bigint[];
  queued integer[];
BEGIN
  -- Each row's share, + for the rows as they are now, - for the rows as they were; what cancels out is no change.
  IF TG_OP = 'INSERT' THEN
    SELECT array_agg(d.allocation_id ORDER BY d.allocation_id), array_agg(d.g ORDER BY d.allocation_id), array_agg(d.q ORDER BY d.allocation_id) INTO ids, gpus, queued
    FROM (SELECT allocation_id, sum(j.gpus)::bigint AS g, count(*) FILTER (WHERE j.state IN ('SUBMITTING', 'PENDING'))::integer AS q
          FROM new_jobs j WHERE j.settled_at IS NULL AND j.state IN ('SUBMITTING', 'PENDING', 'RUNNING') GROUP BY allocation_id) d;
  ELSIF TG_OP = 'DELETE' THEN
    SELECT array_agg(d.allocation_id ORDER BY d.allocation_id), array_agg(d.g ORDER BY d.allocation_id), array_agg(d.q ORDER BY d.allocation_id) INTO ids, gpus, queued
    FROM (SELECT allocation_id, -sum(j.gpus)::bigint AS g, -count(*) FILTER (WHERE j.state IN ('SUBMITTING', 'PENDING'))::integer AS q
          FROM old_jobs j WHERE j.settled_at IS NULL AND j.state IN ('SUBMITTING', 'PENDING', 'RUNNING') GROUP BY allocation_id) d;
  ELSE
    SELECT array_agg(d.allocation_id ORDER BY d.allocation_id), array_agg(d.g ORDER BY d.allocation_id), array_agg(d.q ORDER BY d.allocation_id) INTO ids, gpus, queued
    FROM (SELECT c.allocation_id, sum(c.g)::bigint AS g, sum(c.q)::integer AS q
          FROM (SELECT j.allocation_id, j.gpus::bigint AS g, (j.state IN ('SUBMITTING', 'PENDING'))::integer AS q
                FROM new_jobs j WHERE j.settled_at IS NULL AND j.state IN ('SUBMITTING', 'PENDING', 'RUNNING')
                UNION ALL
                SELECT j.allocation_id, -j.gpus::bigint, -(j.state IN ('SUBMITTING', 'PENDING'))::integer
                FROM old_jobs j WHERE j.settled_at IS NULL AND j.state IN ('SUBMITTING', 'PENDING', 'RUNNING')) c
          GROUP BY c.allocation_id HAVING sum(c.g) <> 0 OR sum(c.q) <> 0) d;
  END IF;
  IF ids IS NOT NULL THEN
    PERFORM allocations_add_in_flight(ids, gpus, queued);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
-- Taken before the triggers and the count, so no job changes between them (the migration is one transaction).
LOCK TABLE jobs IN SHARE ROW EXCLUSIVE MODE;
--> statement-breakpoint
CREATE TRIGGER jobs_in_flight_insert AFTER INSERT ON jobs REFERENCING NEW TABLE AS new_jobs FOR EACH STATEMENT EXECUTE FUNCTION jobs_in_flight_changed();
--> statement-breakpoint
CREATE TRIGGER jobs_in_flight_update AFTER UPDATE ON jobs REFERENCING OLD TABLE AS old_jobs NEW TABLE AS new_jobs FOR EACH STATEMENT EXECUTE FUNCTION jobs_in_flight_changed();
--> statement-breakpoint
CREATE TRIGGER jobs_in_flight_delete AFTER DELETE ON jobs REFERENCING OLD TABLE AS old_jobs FOR EACH STATEMENT EXECUTE FUNCTION jobs_in_flight_changed();
--> statement-breakpoint
UPDATE allocations a SET active_gpus = c.gpus, queued_jobs = c.queued
FROM (SELECT allocation_id, sum(gpus) AS gpus, count(*) FILTER (WHERE state IN ('SUBMITTING', 'PENDING')) AS queued
      FROM jobs WHERE settled_at IS NULL AND state IN ('SUBMITTING', 'PENDING', 'RUNNING') GROUP BY allocation_id) c
WHERE a.id = c.allocation_id;
