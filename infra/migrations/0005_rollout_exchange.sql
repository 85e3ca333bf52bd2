CREATE TABLE "rollout_batches" (
	"batch_id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"run_id" text NOT NULL,
	"stage" text NOT NULL,
	"attempt" integer NOT NULL,
	"task_id" text NOT NULL,
	"seq" integer NOT NULL,
	"policy_version" integer NOT NULL,
	"samples" jsonb NOT NULL,
	"dropped_groups" integer DEFAULT 0 NOT NULL,
	"status" text NOT NULL,
	"staleness" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"judged_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "rollout_policies" (
	"tenant_id" text NOT NULL,
	"run_id" text NOT NULL,
	"stage" text NOT NULL,
	"attempt" integer NOT NULL,
	"version" integer NOT NULL,
	"uri" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "rollout_policies_run_id_stage_attempt_pk" PRIMARY KEY("run_id","stage","attempt")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "rollout_batches_task_seq_uq" ON "rollout_batches" USING btree ("task_id","seq");--> statement-breakpoint
CREATE INDEX "rollout_batches_attempt_idx" ON "rollout_batches" USING btree ("run_id","stage","attempt","status");