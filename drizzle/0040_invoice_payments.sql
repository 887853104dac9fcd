CREATE TABLE "invoice_payments" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"invoice_id" uuid NOT NULL,
	"org_id" uuid NOT NULL,
	"paid_on" date NOT NULL,
	"amount_cents" bigint NOT NULL,
	"reference" text NOT NULL,
	"reverses_id" uuid,
	"recorded_by" uuid NOT NULL,
	"recorded_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "invoice_reminders" (
	"invoice_id" uuid NOT NULL,
	"level" integer NOT NULL,
	"org_id" uuid NOT NULL,
	"sent_on" date NOT NULL,
	CONSTRAINT "invoice_reminders_invoice_id_level_pk" PRIMARY KEY("invoice_id","level")
);
--> statement-breakpoint
CREATE TABLE "overdue_block_lifts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"until_day" date NOT NULL,
	"reason" text NOT NULL,
	"lifted_by" uuid NOT NULL,
	"lifted_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "invoice_payments" ADD CONSTRAINT "invoice_payments_invoice_id_invoices_id_fk" FOREIGN KEY ("invoice_id") REFERENCES "public"."invoices"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invoice_payments" ADD CONSTRAINT "invoice_payments_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invoice_payments" ADD CONSTRAINT "invoice_payments_recorded_by_users_id_fk" FOREIGN KEY ("recorded_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invoice_reminders" ADD CONSTRAINT "invoice_reminders_invoice_id_invoices_id_fk" FOREIGN KEY ("invoice_id") REFERENCES "public"."invoices"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invoice_reminders" ADD CONSTRAINT "invoice_reminders_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "overdue_block_lifts" ADD CONSTRAINT "overdue_block_lifts_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "overdue_block_lifts" ADD CONSTRAINT "overdue_block_lifts_lifted_by_users_id_fk" FOREIGN KEY ("lifted_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "invoice_payments_invoice_idx" ON "invoice_payments" USING btree ("invoice_id");--> statement-breakpoint
CREATE UNIQUE INDEX "invoice_payments_reverses_idx" ON "invoice_payments" USING btree ("reverses_id");--> statement-breakpoint
CREATE INDEX "overdue_block_lifts_org_idx" ON "overdue_block_lifts" USING btree ("org_id","until_day");--> statement-breakpoint
-- hand-written:
-- Payments are append-only like the ledger (a correction is a reversal row); reminders and lifts too.
CREATE TRIGGER invoice_payments_append_only BEFORE UPDATE OR DELETE ON invoice_payments FOR EACH ROW EXECUTE FUNCTION refuse_change_append_only();
--> statement-breakpoint
CREATE TRIGGER invoice_payments_no_truncate BEFORE TRUNCATE ON invoice_payments FOR EACH STATEMENT EXECUTE FUNCTION refuse_change_append_only();
--> statement-breakpoint
CREATE TRIGGER invoice_reminders_append_only BEFORE UPDATE OR DELETE ON invoice_reminders FOR EACH ROW EXECUTE FUNCTION refuse_change_append_only();
--> statement-breakpoint
CREATE TRIGGER overdue_block_lifts_append_only BEFORE UPDATE OR DELETE ON overdue_block_lifts FOR EACH ROW EXECUTE FUNCTION refuse_change_append_only();
--> statement-breakpoint
ALTER TABLE invoice_payments ADD CONSTRAINT invoice_payments_reverses_fk FOREIGN KEY (reverses_id) REFERENCES invoice_payments(id);
--> statement-breakpoint
-- A payment is positive and reverses nothing; a reversal is negative and names its payment.
ALTER TABLE invoice_payments ADD CONSTRAINT invoice_payments_sign_ck CHECK ((amount_cents > 0 AND reverses_id IS NULL) OR (amount_cents < 0 AND reverses_id IS NOT NULL));
--> statement-breakpoint
ALTER TABLE invoice_reminders ADD CONSTRAINT invoice_reminders_level_ck CHECK (level >= 1);
--> statement-breakpoint
-- Tenants read their own rows (invoice pages, the block policy at submission) and write none: staff
-- and the worker write through the portal's own connection (service_rows).
GRANT SELECT ON invoice_payments, invoice_reminders, overdue_block_lifts TO portal_tenant;
--> statement-breakpoint
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['invoice_payments', 'invoice_reminders', 'overdue_block_lifts'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY service_rows ON %I FOR ALL TO portal_service USING (true) WITH CHECK (true)', t);
    EXECUTE format('CREATE POLICY tenant_rows ON %I FOR SELECT TO portal_tenant USING (org_id = portal_tenant_id())', t);
  END LOOP;
END $$;
