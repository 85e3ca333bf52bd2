// Goodput, interruption-rate and checkpoint-bandwidth projections land here with the desk telemetry work.
export {};
