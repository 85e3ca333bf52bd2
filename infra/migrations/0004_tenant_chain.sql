CREATE TABLE "tenant_chain" (
	"tenant_id" text NOT NULL,
	"tenant_seq" bigint NOT NULL,
	"seq" bigint NOT NULL,
	"position" bigint NOT NULL,
	"prev_hash" text,
	"hash" text NOT NULL,
	CONSTRAINT "tenant_chain_pk" PRIMARY KEY("tenant_id","tenant_seq")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "tenant_chain_seq_uq" ON "tenant_chain" USING btree ("seq");--> statement-breakpoint
CREATE UNIQUE INDEX "tenant_chain_position_uq" ON "tenant_chain" USING btree ("position");