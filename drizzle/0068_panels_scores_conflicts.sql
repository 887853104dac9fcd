CREATE TYPE "public"."review_conflict_kind" AS ENUM('declared', 'override');--> statement-breakpoint
CREATE TYPE "public"."review_status" AS ENUM('assigned', 'scored', 'declined');--> statement-breakpoint
CREATE TABLE "review_assignments" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"application_id" uuid NOT NULL,
	"org_id" uuid NOT NULL,
	"reviewer_user_id" uuid NOT NULL,
	"assigned_by" uuid NOT NULL,
	"assigned_at" timestamp with time zone DEFAULT now() NOT NULL,
	"status" "review_status" DEFAULT 'assigned' NOT NULL,
	"scores" jsonb,
	"comment_to_applicant" text DEFAULT '' NOT NULL,
	"internal_note" text DEFAULT '' NOT NULL,
	"decline_reason" text,
	"scored_at" timestamp with time zone,
	"reminded_at" timestamp with time zone,
	CONSTRAINT "review_assignments_scored_ck" CHECK (("review_assignments"."status" = 'scored') = ("review_assignments"."scores" is not null and "review_assignments"."scored_at" is not null))
);
--> statement-breakpoint
CREATE TABLE "review_conflicts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"application_id" uuid NOT NULL,
	"reviewer_user_id" uuid NOT NULL,
	"kind" "review_conflict_kind" NOT NULL,
	"reason" text NOT NULL,
	"created_by" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"seq" bigserial NOT NULL
);
--> statement-breakpoint
CREATE TABLE "round_reviewers" (
	"round_id" uuid NOT NULL,
	"reviewer_user_id" uuid NOT NULL,
	"assigned_by" uuid NOT NULL,
	"assigned_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "round_reviewers_round_id_reviewer_user_id_pk" PRIMARY KEY("round_id","reviewer_user_id")
);
--> statement-breakpoint
-- The calls opened before rubrics score on the default one (server/core/reviews.ts DEFAULT_RUBRIC).
ALTER TABLE "calls" ADD COLUMN "rubric" jsonb NOT NULL DEFAULT '[{"id":"excellence","name":"Excellence","nameDe":"Exzellenz"},{"id":"feasibility","name":"Technical feasibility","nameDe":"Technische Machbarkeit"},{"id":"impact","name":"Impact","nameDe":"Wirkung"}]'::jsonb;--> statement-breakpoint
ALTER TABLE "calls" ALTER COLUMN "rubric" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "review_assignments" ADD CONSTRAINT "review_assignments_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "review_assignments" ADD CONSTRAINT "review_assignments_org_id_organisations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organisations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "review_assignments" ADD CONSTRAINT "review_assignments_reviewer_user_id_users_id_fk" FOREIGN KEY ("reviewer_user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "review_assignments" ADD CONSTRAINT "review_assignments_assigned_by_users_id_fk" FOREIGN KEY ("assigned_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "review_conflicts" ADD CONSTRAINT "review_conflicts_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "review_conflicts" ADD CONSTRAINT "review_conflicts_reviewer_user_id_users_id_fk" FOREIGN KEY ("reviewer_user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "review_conflicts" ADD CONSTRAINT "review_conflicts_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "round_reviewers" ADD CONSTRAINT "round_reviewers_round_id_call_rounds_id_fk" FOREIGN KEY ("round_id") REFERENCES "public"."call_rounds"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "round_reviewers" ADD CONSTRAINT "round_reviewers_reviewer_user_id_users_id_fk" FOREIGN KEY ("reviewer_user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "round_reviewers" ADD CONSTRAINT "round_reviewers_assigned_by_users_id_fk" FOREIGN KEY ("assigned_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "review_assignments_unique_idx" ON "review_assignments" USING btree ("application_id","reviewer_user_id");--> statement-breakpoint
CREATE INDEX "review_assignments_reviewer_idx" ON "review_assignments" USING btree ("reviewer_user_id","status");--> statement-breakpoint
CREATE INDEX "review_conflicts_idx" ON "review_conflicts" USING btree ("application_id","reviewer_user_id");--> statement-breakpoint
-- Reviews are the centre's (issue #32): only the portal's own connection writes them. The applicant's tenant
-- reads a review of its own application once that is decided, and of it only the scores and the comment
-- to the applicant: never who wrote it, nor the internal note (a column grant). Panels and declared or
-- overridden conflicts of interest are staff's alone.
GRANT SELECT (id, application_id, org_id, status, scores, comment_to_applicant, scored_at) ON review_assignments TO portal_tenant;--> statement-breakpoint
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['review_assignments', 'round_reviewers', 'review_conflicts'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY service_rows ON %I FOR ALL TO portal_service USING (true) WITH CHECK (true)', t);
  END LOOP;
END $$;--> statement-breakpoint
CREATE POLICY tenant_rows ON review_assignments FOR SELECT TO portal_tenant
  USING (org_id = portal_tenant_id() AND status = 'scored' AND application_id IN (SELECT id FROM applications WHERE status IN ('approved', 'rejected', 'changes_requested')));
