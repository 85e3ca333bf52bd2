CREATE TABLE "tasks" (
	"task_id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"run_id" text NOT NULL,
	"booking_id" text NOT NULL,
	"node_id" text NOT NULL,
	"stage" text NOT NULL,
	"attempt" integer NOT NULL,
	"rank" integer NOT NULL,
	"role" text NOT NULL,
	"status" text NOT NULL,
	"last_seq" integer DEFAULT 0 NOT NULL,
	"spec" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "nodes" ADD COLUMN "agent" jsonb;--> statement-breakpoint
ALTER TABLE "nodes" ADD COLUMN "registered_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "nodes" ADD COLUMN "last_health" jsonb;--> statement-breakpoint
CREATE INDEX "tasks_node_status_idx" ON "tasks" USING btree ("node_id","status");--> statement-breakpoint
CREATE INDEX "tasks_run_idx" ON "tasks" USING btree ("run_id");--> statement-breakpoint
CREATE INDEX "nodes_booking_idx" ON "nodes" USING btree ("tenant_id","booking_id");