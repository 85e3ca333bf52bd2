CREATE TABLE "slo_breach_counts" (
	"tenant_id" text NOT NULL,
	"slo" text NOT NULL,
	"bound" text NOT NULL,
	"count" bigint NOT NULL,
	CONSTRAINT "slo_breach_counts_tenant_id_slo_bound_pk" PRIMARY KEY("tenant_id","slo","bound")
);
--> statement-breakpoint
CREATE TABLE "slo_latency_counts" (
	"tenant_id" text NOT NULL,
	"latency" text NOT NULL,
	"incident_kind" text NOT NULL,
	"bucket" integer NOT NULL,
	"count" bigint NOT NULL,
	"sum_s" double precision NOT NULL,
	CONSTRAINT "slo_latency_counts_tenant_id_latency_incident_kind_bucket_pk" PRIMARY KEY("tenant_id","latency","incident_kind","bucket")
);
