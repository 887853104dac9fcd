ALTER TABLE "organisations" ADD COLUMN "price_list_accepted_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "organisations" ADD COLUMN "price_list_accepted_by" uuid;--> statement-breakpoint
ALTER TABLE "organisations" ADD CONSTRAINT "organisations_price_list_accepted_by_users_id_fk" FOREIGN KEY ("price_list_accepted_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- The owner accepts the price list in a tenant call: its role may write these two columns of its own row.
GRANT UPDATE (price_list_accepted_at, price_list_accepted_by) ON organisations TO portal_tenant;
