-- Custom migration (drizzle cannot declare it): the telemetry projection now stores segments cut at UTC midnights
-- (the desk finds a window's edges by a range of starts), so a database folded before is emptied and its telemetry
-- projection starts again from position 0 on its next catch-up (a fresh database is unchanged).
DELETE FROM "projection_checkpoints" WHERE "name" = 'telemetry';--> statement-breakpoint
TRUNCATE "telemetry_bookings", "telemetry_runs", "telemetry_segments", "telemetry_interruptions", "telemetry_checkpoints", "telemetry_day_sums", "telemetry_day_interruptions", "telemetry_day_histograms";
