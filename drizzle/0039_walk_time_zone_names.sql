ALTER TABLE "invoice_lines" ADD COLUMN "description_de" text;--> statement-breakpoint
ALTER TABLE "resource_classes" ADD COLUMN "name_de" text;--> statement-breakpoint
ALTER TABLE "sites" ADD COLUMN "name_de" text;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "time_zone" text DEFAULT 'Europe/Berlin' NOT NULL;