-- Clusters created before the operations log kept the whole engine in sim_cluster_state.state.
-- That state becomes the cluster's first snapshot (after operation 0) and the row keeps only the
-- clock and the counters. The live adapter's queue depth (LIVE_QUEUE_DEPTH = 100 in
-- server/adapters/scheduler/simulated.ts) is switched on as for new clusters, so an old cluster's
-- calls also cost the same however many jobs it holds.
INSERT INTO "sim_cluster_snapshots" ("cluster_id", "seq", "state", "sim_seconds", "created_at")
SELECT "id", 0, jsonb_set("state", '{config,policy,queueDepth}', '100'::jsonb, true), ("state"->>'nowSeconds')::bigint, "updated_at"
FROM "sim_cluster_state"
WHERE "state" IS NOT NULL;
--> statement-breakpoint
UPDATE "sim_cluster_state"
SET "op_seq" = 0, "sim_now_seconds" = ("state"->>'nowSeconds')::bigint, "state" = NULL
WHERE "state" IS NOT NULL;
