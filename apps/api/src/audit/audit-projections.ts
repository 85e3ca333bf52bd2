import { ProjectionRegistry } from '@ito/ledger';
import { bookingsProjection, runsProjection, sloProjection, tasksProjection } from '@ito/runs';

/**
 * Every projection an auditor's replay rebuilds and compares, in the order of INLINE_PROJECTIONS (the tasks
 * projection reads the run rows the runs projection wrote). A projection added later joins the replay by
 * registering here, with the tables it writes.
 */
export const auditProjections = new ProjectionRegistry()
  .register({ ...runsProjection, tables: [{ name: 'runs', key: ['run_id'], tenantColumn: 'tenant_id' }] })
  .register({ ...tasksProjection, tables: [{ name: 'tasks', key: ['task_id'], tenantColumn: 'tenant_id' }] })
  .register({ ...bookingsProjection, tables: [{ name: 'bookings', key: ['booking_id'], tenantColumn: 'tenant_id' }] })
  .register({
    ...sloProjection,
    tables: [
      { name: 'slo_latency_counts', key: ['tenant_id', 'latency', 'incident_kind', 'bucket'], tenantColumn: 'tenant_id' },
      { name: 'slo_breach_counts', key: ['tenant_id', 'slo', 'bound'], tenantColumn: 'tenant_id' },
    ],
  });
