CREATE TABLE "event_chain" (
	"seq" bigint PRIMARY KEY NOT NULL,
	"position" bigint NOT NULL,
	"transaction_id" "xid8" NOT NULL,
	"prev_hash" text,
	"hash" text NOT NULL,
	"sealed_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "events" (
	"position" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "events_position_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"stream_id" text NOT NULL,
	"stream_version" integer NOT NULL,
	"tenant_id" text NOT NULL,
	"type" text NOT NULL,
	"schema_version" integer DEFAULT 1 NOT NULL,
	"data" jsonb NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"recorded_at" timestamp (3) with time zone NOT NULL,
	"transaction_id" "xid8" DEFAULT pg_current_xact_id() NOT NULL,
	"content_hash" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "idempotency_keys" (
	"tenant_id" text NOT NULL,
	"key" text NOT NULL,
	"fingerprint" text NOT NULL,
	"result" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "idempotency_keys_pk" PRIMARY KEY("tenant_id","key")
);
--> statement-breakpoint
CREATE TABLE "projection_checkpoints" (
	"name" text PRIMARY KEY NOT NULL,
	"position" bigint DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "event_chain_position_uq" ON "event_chain" USING btree ("position");--> statement-breakpoint
CREATE UNIQUE INDEX "events_stream_version_uq" ON "events" USING btree ("stream_id","stream_version");--> statement-breakpoint
CREATE INDEX "events_safe_order_idx" ON "events" USING btree ("transaction_id","position");