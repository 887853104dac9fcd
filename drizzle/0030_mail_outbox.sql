CREATE TYPE "public"."mail_status" AS ENUM('pending', 'sent', 'failed');--> statement-breakpoint
CREATE TABLE "mail_outbox" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"org_id" uuid,
	"to_user_id" uuid,
	"to_address" text NOT NULL,
	"locale" text NOT NULL,
	"subject" text NOT NULL,
	"text_body" text NOT NULL,
	"html_body" text NOT NULL,
	"dedupe_key" text,
	"status" "mail_status" DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"lease_until" timestamp with time zone,
	"last_error" text,
	"sent_at" timestamp with time zone,
	"message_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "mail_outbox" ADD CONSTRAINT "mail_outbox_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mail_outbox" ADD CONSTRAINT "mail_outbox_to_user_id_users_id_fk" FOREIGN KEY ("to_user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "mail_outbox_dedupe_idx" ON "mail_outbox" USING btree ("dedupe_key");--> statement-breakpoint
CREATE INDEX "mail_outbox_due_idx" ON "mail_outbox" USING btree ("next_attempt_at") WHERE "mail_outbox"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "mail_outbox_created_idx" ON "mail_outbox" USING btree ("created_at");--> statement-breakpoint
-- Behind the wall like the tenant tables (drizzle/0018): the portal's own connection passes through
-- service_rows; a tenant's write (an invitation) may add mails about its own tenant only, to its own
-- members, to staff, or to an address that is no account yet, and can read none back.
GRANT INSERT ON mail_outbox TO portal_tenant;
--> statement-breakpoint
GRANT USAGE ON SEQUENCE mail_outbox_id_seq TO portal_tenant;
--> statement-breakpoint
ALTER TABLE mail_outbox ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE mail_outbox FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY service_rows ON mail_outbox FOR ALL TO portal_service USING (portal_tenant_id() IS NULL) WITH CHECK (portal_tenant_id() IS NULL);
--> statement-breakpoint
CREATE POLICY tenant_insert ON mail_outbox FOR INSERT TO portal_tenant WITH CHECK (org_id = portal_tenant_id() AND (to_user_id IS NULL OR to_user_id IN (SELECT user_id FROM memberships) OR portal_is_staff(to_user_id)));
