-- Custom migration (drizzle cannot declare it): the telemetry projection now keeps per-day sums and a run's kept
-- fold state holds only what later events can change, so a database folded before is emptied and its telemetry
-- projection starts again from position 0 on its next catch-up (the desk reads it; a fresh database is unchanged).
DELETE FROM "projection_checkpoints" WHERE "name" = 'telemetry';--> statement-breakpoint
TRUNCATE "telemetry_bookings", "telemetry_runs", "telemetry_segments", "telemetry_interruptions", "telemetry_checkpoints";
