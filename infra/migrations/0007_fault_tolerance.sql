CREATE TABLE "node_liveness" (
	"node_id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"last_heartbeat_at" timestamp with time zone NOT NULL,
	"health" jsonb,
	"task_id" text,
	"attempt" integer,
	"step" integer,
	"progress_at" timestamp with time zone,
	"step_s" double precision
);
--> statement-breakpoint
CREATE TABLE "role_leases" (
	"role" text PRIMARY KEY NOT NULL,
	"holder" text NOT NULL,
	"token" integer NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"renewed_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "nodes" ADD COLUMN "lost_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "nodes" ADD COLUMN "lost_run_id" text;