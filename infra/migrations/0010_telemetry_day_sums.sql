CREATE TABLE "telemetry_day_interruptions" (
	"day_ms" bigint NOT NULL,
	"booking_id" text NOT NULL,
	"cause" text NOT NULL,
	"count" bigint NOT NULL,
	CONSTRAINT "telemetry_day_interruptions_day_ms_booking_id_cause_pk" PRIMARY KEY("day_ms","booking_id","cause")
);
--> statement-breakpoint
CREATE TABLE "telemetry_day_sums" (
	"day_ms" bigint NOT NULL,
	"booking_id" text NOT NULL,
	"label" text NOT NULL,
	"ms" bigint NOT NULL,
	CONSTRAINT "telemetry_day_sums_day_ms_booking_id_label_pk" PRIMARY KEY("day_ms","booking_id","label")
);
--> statement-breakpoint
CREATE TABLE "telemetry_day_values" (
	"day_ms" bigint NOT NULL,
	"booking_id" text NOT NULL,
	"metric" text NOT NULL,
	"value" double precision NOT NULL,
	"count" bigint NOT NULL,
	CONSTRAINT "telemetry_day_values_day_ms_booking_id_metric_value_pk" PRIMARY KEY("day_ms","booking_id","metric","value")
);
--> statement-breakpoint
DROP INDEX "telemetry_segments_run_idx";--> statement-breakpoint
DROP INDEX "telemetry_segments_time_idx";--> statement-breakpoint
CREATE INDEX "telemetry_segments_run_start_idx" ON "telemetry_segments" USING btree ("run_id","start_ms");--> statement-breakpoint
CREATE INDEX "telemetry_segments_span_idx" ON "telemetry_segments" USING gist (int8range("start_ms", "end_ms"));