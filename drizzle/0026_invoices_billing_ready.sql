-- Invoices an accounts department accepts (issue #10): the issuer and the customer's billing profile as
-- they were when issued, the VAT treatment (reverse charge), the due date, and the usage each invoice
-- covers, so a closing invoice can take a month so far and the month's invoice the rest.
DROP INDEX "invoices_org_month_idx";--> statement-breakpoint
ALTER TABLE "invoices" ADD COLUMN "covers_from" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "invoices" ADD COLUMN "covers_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "invoices" ADD COLUMN "issuer" jsonb;--> statement-breakpoint
ALTER TABLE "invoices" ADD COLUMN "vat_treatment" text DEFAULT 'standard' NOT NULL;--> statement-breakpoint
ALTER TABLE "invoices" ADD COLUMN "due_date" date;--> statement-breakpoint
-- Invoices issued so far each covered their whole month. Issued invoices refuse UPDATE by trigger; the
-- backfill of the two new columns is the one change this migration makes to them.
ALTER TABLE "invoices" DISABLE TRIGGER "invoices_immutable";--> statement-breakpoint
UPDATE "invoices" SET "covers_from" = ("period_month"::timestamp AT TIME ZONE 'UTC'), "covers_until" = (("period_month" + interval '1 month')::timestamp AT TIME ZONE 'UTC');--> statement-breakpoint
ALTER TABLE "invoices" ENABLE TRIGGER "invoices_immutable";--> statement-breakpoint
ALTER TABLE "invoices" ALTER COLUMN "covers_from" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "invoices" ALTER COLUMN "covers_until" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_covers_a_period" CHECK ("covers_from" < "covers_until");--> statement-breakpoint
CREATE UNIQUE INDEX "invoices_org_covers_from_idx" ON "invoices" USING btree ("org_id","covers_from");--> statement-breakpoint
CREATE INDEX "invoices_org_month_idx" ON "invoices" USING btree ("org_id","period_month");
