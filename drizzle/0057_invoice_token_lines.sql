ALTER TABLE "invoice_lines" DROP CONSTRAINT "invoice_lines_kind_ck";--> statement-breakpoint
ALTER TABLE "invoice_lines" ADD COLUMN "model" text;--> statement-breakpoint
ALTER TABLE "invoice_lines" ADD COLUMN "input_tokens" bigint;--> statement-breakpoint
ALTER TABLE "invoice_lines" ADD COLUMN "output_tokens" bigint;--> statement-breakpoint
ALTER TABLE "invoice_lines" ADD COLUMN "input_cents_per_m_tokens" integer;--> statement-breakpoint
ALTER TABLE "invoice_lines" ADD COLUMN "output_cents_per_m_tokens" integer;--> statement-breakpoint
ALTER TABLE "invoice_lines" ADD CONSTRAINT "invoice_lines_kind_ck" CHECK (("invoice_lines"."kind" = 'compute' and "invoice_lines"."resource_class_id" is not null) or ("invoice_lines"."kind" = 'storage' and "invoice_lines"."site_id" is not null and "invoice_lines"."storage_byte_days" >= 0 and "invoice_lines"."milli_tb_months" >= 0 and "invoice_lines"."unit_price_cents_per_tb_month" >= 0) or ("invoice_lines"."kind" = 'tokens' and "invoice_lines"."model" is not null and "invoice_lines"."input_tokens" >= 0 and "invoice_lines"."output_tokens" >= 0 and "invoice_lines"."input_cents_per_m_tokens" >= 0 and "invoice_lines"."output_cents_per_m_tokens" >= 0));