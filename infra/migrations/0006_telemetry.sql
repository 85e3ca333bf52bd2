CREATE TABLE "telemetry_bookings" (
	"booking_id" text PRIMARY KEY NOT NULL,
	"region" text NOT NULL,
	"fabric" text NOT NULL,
	"gpu" text NOT NULL,
	"nodes" integer NOT NULL,
	"gpus_per_node" integer NOT NULL,
	"rate_usd_per_gpu_hour" double precision NOT NULL,
	"term_start_ms" bigint NOT NULL,
	"term_end_ms" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "telemetry_checkpoints" (
	"run_id" text NOT NULL,
	"booking_id" text NOT NULL,
	"kind" text NOT NULL,
	"at_ms" bigint NOT NULL,
	"bytes" bigint NOT NULL,
	"ms" bigint NOT NULL,
	"bandwidth_bytes_per_s" double precision
);
--> statement-breakpoint
CREATE TABLE "telemetry_interruptions" (
	"run_id" text NOT NULL,
	"booking_id" text NOT NULL,
	"cause" text NOT NULL,
	"at_ms" bigint NOT NULL,
	"detection_ms" bigint,
	"resume_ms" bigint
);
--> statement-breakpoint
CREATE TABLE "telemetry_runs" (
	"run_id" text PRIMARY KEY NOT NULL,
	"booking_id" text,
	"state" jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "telemetry_segments" (
	"run_id" text NOT NULL,
	"booking_id" text NOT NULL,
	"start_ms" bigint NOT NULL,
	"end_ms" bigint NOT NULL,
	"label" text NOT NULL
);
--> statement-breakpoint
CREATE INDEX "telemetry_checkpoints_run_idx" ON "telemetry_checkpoints" USING btree ("run_id");--> statement-breakpoint
CREATE INDEX "telemetry_checkpoints_at_idx" ON "telemetry_checkpoints" USING btree ("at_ms");--> statement-breakpoint
CREATE INDEX "telemetry_interruptions_run_idx" ON "telemetry_interruptions" USING btree ("run_id");--> statement-breakpoint
CREATE INDEX "telemetry_interruptions_at_idx" ON "telemetry_interruptions" USING btree ("at_ms");--> statement-breakpoint
CREATE INDEX "telemetry_segments_run_idx" ON "telemetry_segments" USING btree ("run_id");--> statement-breakpoint
CREATE INDEX "telemetry_segments_time_idx" ON "telemetry_segments" USING btree ("start_ms","end_ms");