CREATE TABLE "api_keys" (
	"key_id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"secret_hash" text NOT NULL,
	"scopes" text[] NOT NULL,
	"label" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "bookings" (
	"booking_id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"status" text NOT NULL,
	"gpu" text NOT NULL,
	"nodes" integer NOT NULL,
	"gpus_per_node" integer NOT NULL,
	"region" text NOT NULL,
	"fabric" text NOT NULL,
	"term_start" timestamp with time zone NOT NULL,
	"term_end" timestamp with time zone NOT NULL,
	"rate_usd_per_gpu_hour" double precision NOT NULL,
	"node_inventory" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"version" integer NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "confirmations" (
	"ref" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"action" text NOT NULL,
	"booking_id" text,
	"run_id" text,
	"manifest_digest" text,
	"cost_usd" double precision NOT NULL,
	"max_incremental_cost_usd" double precision NOT NULL,
	"status" text NOT NULL,
	"requested_by" text NOT NULL,
	"decided_by" text,
	"decided_at" timestamp with time zone,
	"consumed_at" timestamp with time zone,
	"consumed_for" text,
	"failed_uses" integer DEFAULT 0 NOT NULL,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "manifests" (
	"tenant_id" text NOT NULL,
	"digest" text NOT NULL,
	"body" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "nodes" (
	"node_id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"booking_id" text NOT NULL,
	"name" text NOT NULL,
	"credential_hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone,
	"last_heartbeat_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "runs" (
	"run_id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"booking_id" text NOT NULL,
	"state" text NOT NULL,
	"stage" text,
	"manifest_digest" text NOT NULL,
	"idempotency_key" text NOT NULL,
	"confirmation_ref" text NOT NULL,
	"estimated_cost_usd" double precision NOT NULL,
	"incremental_cost_usd" double precision NOT NULL,
	"plan" jsonb NOT NULL,
	"aggregate" jsonb NOT NULL,
	"version" integer NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tenants" (
	"tenant_id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"policy" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_tenant_id_tenants_tenant_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("tenant_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_secret_hash_uq" ON "api_keys" USING btree ("secret_hash");--> statement-breakpoint
CREATE INDEX "api_keys_tenant_idx" ON "api_keys" USING btree ("tenant_id");--> statement-breakpoint
CREATE INDEX "bookings_tenant_idx" ON "bookings" USING btree ("tenant_id","booking_id");--> statement-breakpoint
CREATE INDEX "confirmations_tenant_idx" ON "confirmations" USING btree ("tenant_id","ref");--> statement-breakpoint
CREATE UNIQUE INDEX "manifests_tenant_digest_uq" ON "manifests" USING btree ("tenant_id","digest");--> statement-breakpoint
CREATE UNIQUE INDEX "nodes_credential_hash_uq" ON "nodes" USING btree ("credential_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "nodes_booking_name_uq" ON "nodes" USING btree ("booking_id","name");--> statement-breakpoint
CREATE INDEX "runs_tenant_idx" ON "runs" USING btree ("tenant_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "runs_tenant_idempotency_uq" ON "runs" USING btree ("tenant_id","idempotency_key");