CREATE TYPE "public"."sim_op_kind" AS ENUM('submit', 'cancel');--> statement-breakpoint
CREATE TABLE "sim_cluster_ops" (
	"cluster_id" text NOT NULL,
	"seq" bigint NOT NULL,
	"at_seconds" bigint NOT NULL,
	"kind" "sim_op_kind" NOT NULL,
	"payload" jsonb NOT NULL,
	CONSTRAINT "sim_cluster_ops_cluster_id_seq_pk" PRIMARY KEY("cluster_id","seq")
);
--> statement-breakpoint
CREATE TABLE "sim_cluster_snapshots" (
	"cluster_id" text NOT NULL,
	"seq" bigint NOT NULL,
	"state" jsonb NOT NULL,
	"sim_seconds" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sim_cluster_snapshots_cluster_id_seq_pk" PRIMARY KEY("cluster_id","seq")
);
--> statement-breakpoint
ALTER TABLE "sim_cluster_state" ALTER COLUMN "version" SET DATA TYPE bigint;--> statement-breakpoint
ALTER TABLE "sim_cluster_state" ALTER COLUMN "state" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "sim_cluster_state" ADD COLUMN "op_seq" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "sim_cluster_state" ADD COLUMN "sim_now_seconds" bigint DEFAULT 0 NOT NULL;