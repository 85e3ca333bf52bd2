CREATE TABLE "slo_breaches" (
	"position" bigint PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"run_id" text NOT NULL,
	"incident_kind" text NOT NULL,
	"slo" text NOT NULL,
	"bound" text NOT NULL,
	"measured_s" double precision NOT NULL,
	"target_s" double precision NOT NULL
);
--> statement-breakpoint
CREATE TABLE "slo_incidents" (
	"position" bigint PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"run_id" text NOT NULL,
	"incident_kind" text NOT NULL,
	"node_id" text NOT NULL,
	"detected_at" timestamp with time zone NOT NULL,
	"detection_s" double precision,
	"resume_s" double precision
);
