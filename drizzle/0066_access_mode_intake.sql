CREATE TYPE "public"."access_intake" AS ENUM('first_come', 'rounds');--> statement-breakpoint
ALTER TABLE "access_modes" ADD COLUMN "min_gpu_seconds" bigint;--> statement-breakpoint
ALTER TABLE "access_modes" ADD COLUMN "intake" "access_intake" DEFAULT 'first_come' NOT NULL;