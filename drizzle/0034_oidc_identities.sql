CREATE TABLE "user_identities" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"provider" text NOT NULL,
	"subject" text NOT NULL,
	"email" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "organisations" ADD COLUMN "require_sso" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "user_identities" ADD CONSTRAINT "user_identities_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "user_identities_provider_subject_idx" ON "user_identities" USING btree ("provider","subject");--> statement-breakpoint
CREATE INDEX "user_identities_user_idx" ON "user_identities" USING btree ("user_id");--> statement-breakpoint
-- hand-written:
-- Behind the wall like the other tables (drizzle/0017, 0018, 0030): only the portal's own connection
-- (sign-in, the profile page) reads and writes linked identities, through service_rows; a tenant's
-- transaction gets no grant at all, so another tenant's members' provider subjects stay out of reach.
-- `true` as in drizzle/0021: portal_tenant is no member of portal_service.
ALTER TABLE user_identities ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE user_identities FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY service_rows ON user_identities FOR ALL TO portal_service USING (true) WITH CHECK (true);
