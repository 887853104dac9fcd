CREATE INDEX "jobs_org_ended_idx" ON "jobs" USING btree ("org_id","ended_at");--> statement-breakpoint
CREATE INDEX "jobs_started_idx" ON "jobs" USING btree ("started_at");