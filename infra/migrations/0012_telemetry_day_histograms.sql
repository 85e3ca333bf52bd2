CREATE TABLE "telemetry_day_histograms" (
	"day_ms" bigint NOT NULL,
	"booking_id" text NOT NULL,
	"metric" text NOT NULL,
	"bucket" integer NOT NULL,
	"count" bigint NOT NULL,
	"sum" numeric NOT NULL,
	CONSTRAINT "telemetry_day_histograms_day_ms_booking_id_metric_bucket_pk" PRIMARY KEY("day_ms","booking_id","metric","bucket")
);
--> statement-breakpoint
ALTER TABLE "telemetry_day_values" DISABLE ROW LEVEL SECURITY;--> statement-breakpoint
DROP TABLE "telemetry_day_values" CASCADE;--> statement-breakpoint
CREATE INDEX "telemetry_runs_time_scaled_idx" ON "telemetry_runs" USING btree ("booking_id") WHERE (state->'clock'->>'time_scaled')::boolean;