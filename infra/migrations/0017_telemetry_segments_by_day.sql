DROP INDEX "telemetry_segments_span_idx";--> statement-breakpoint
CREATE INDEX "telemetry_segments_start_idx" ON "telemetry_segments" USING btree ("start_ms","end_ms","booking_id","label");