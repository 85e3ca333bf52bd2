ALTER TABLE "api_keys" ADD COLUMN "principal" text;--> statement-breakpoint
ALTER TABLE "confirmations" ADD COLUMN "requested_by_principal" text;--> statement-breakpoint
ALTER TABLE "confirmations" ADD COLUMN "decided_by_principal" text;