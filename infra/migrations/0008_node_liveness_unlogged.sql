-- Custom migration (drizzle cannot declare UNLOGGED): heartbeat liveness is overwritten every interval and is
-- not a fact of record, so it skips the WAL. After a crash the table is empty; the monitor treats that as a pause.
ALTER TABLE "node_liveness" SET UNLOGGED;
