CREATE TYPE "public"."mail_kind" AS ENUM('invitation', 'application_submitted', 'application_decided', 'allocation_expiring', 'budget_threshold', 'monthly_cap_reached', 'job_finished', 'invoice_issued', 'tenant_status');--> statement-breakpoint
CREATE TABLE "daily_task_runs" (
	"task" text NOT NULL,
	"day" date NOT NULL,
	"done_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "daily_task_runs_task_day_pk" PRIMARY KEY("task","day")
);
--> statement-breakpoint
CREATE TABLE "notification_preferences" (
	"user_id" uuid NOT NULL,
	"kind" "mail_kind" NOT NULL,
	"email" boolean NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "notification_preferences_user_id_kind_pk" PRIMARY KEY("user_id","kind")
);
--> statement-breakpoint
ALTER TABLE "mail_outbox" ADD COLUMN "attachments" jsonb;--> statement-breakpoint
ALTER TABLE "organisations" ADD COLUMN "cap_reached_noticed_month" date;--> statement-breakpoint
ALTER TABLE "notification_preferences" ADD CONSTRAINT "notification_preferences_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- hand-written:
-- A person's mail choices (server/core/mail/kinds.ts): set on the profile through the portal's own
-- connection; a tenant's transaction that notifies (an application submitted, a budget threshold
-- crossed in a reservation) reads the choices of its own members and of staff (the reviewers it
-- tells), to mail only those who want it, and writes none.
GRANT SELECT ON notification_preferences TO portal_tenant;
--> statement-breakpoint
ALTER TABLE notification_preferences ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE notification_preferences FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY service_rows ON notification_preferences FOR ALL TO portal_service USING (true) WITH CHECK (true);
--> statement-breakpoint
CREATE POLICY tenant_read ON notification_preferences FOR SELECT TO portal_tenant USING (user_id IN (SELECT user_id FROM memberships) OR portal_is_staff(user_id));
--> statement-breakpoint
-- The reservation that reaches the monthly cap marks the month on the (already locked) organisation
-- row, in the tenant's own transaction, so the notice and mail go out once a month.
GRANT UPDATE (cap_reached_noticed_month) ON organisations TO portal_tenant;
--> statement-breakpoint
-- daily_task_runs is the worker's alone: no grant, out of a tenant's reach.
REVOKE ALL ON daily_task_runs FROM portal_tenant;
