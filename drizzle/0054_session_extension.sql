ALTER TYPE "public"."sim_op_kind" ADD VALUE 'extend';--> statement-breakpoint
DROP INDEX "ledger_entries_job_kind_idx";--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD COLUMN "extension" smallint DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_entries_job_kind_idx" ON "ledger_entries" USING btree ("job_id","kind",coalesce("task_index", -1),"extension") WHERE "ledger_entries"."job_id" is not null;