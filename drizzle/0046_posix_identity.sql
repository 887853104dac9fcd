ALTER TABLE "jobs" ADD COLUMN "run_as_user" text;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "run_as_group" text;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "posix_name" text;--> statement-breakpoint
CREATE UNIQUE INDEX "users_posix_name_idx" ON "users" USING btree ("posix_name");--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_posix_name_ck" CHECK ("users"."posix_name" ~ '^[a-z_][a-z0-9_-]{0,31}$');