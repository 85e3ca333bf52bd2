-- Custom migration (drizzle cannot declare it): the checkpoint bandwidths and latencies are now kept as fixed-bucket
-- histograms (telemetry_day_histograms, new and empty), so a database folded before is emptied and its telemetry
-- projection starts again from position 0 on its next catch-up (a fresh database is unchanged).
DELETE FROM "projection_checkpoints" WHERE "name" = 'telemetry';--> statement-breakpoint
TRUNCATE "telemetry_bookings", "telemetry_runs", "telemetry_segments", "telemetry_interruptions", "telemetry_checkpoints", "telemetry_day_sums", "telemetry_day_interruptions";
