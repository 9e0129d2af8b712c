import type { CallContext } from '../auth/principal.js';
import { CATALOG } from '../catalog.js';
import { notFound } from '../core/errors.js';
import { openSecret, readResource } from '../resources/store.js';
import { counted, type Calls } from './counters.js';

/**
 * POST /api/v1/diagnostics/trace: runs a described read of one of the caller's own resources
 * through the domain layer (the head read, then, if asked, opening its sealed part) and
 * answers the timing of each phase with the dependency calls it made: DynamoDB round trips
 * by operation and key provider (KMS) calls. Signing-device (HSM) calls are not part of a
 * read. The answer never carries the value: only how many fields it has.
 */
export interface TraceBody {
  readonly type: string;
  readonly id: string;
  readonly open: boolean;
}

const phase = (name: string, run: { calls: Calls; ms: number }) => ({
  name,
  ms: run.ms,
  dynamodb_round_trips: run.calls.dynamodb.length,
  dynamodb_operations: run.calls.dynamodb,
  key_provider_calls: run.calls.keyProvider.length,
  key_provider_operations: run.calls.keyProvider,
});

export async function traceRead(ctx: CallContext, body: TraceBody) {
  // the type is one of the catalogue (TraceBody); the route's admin:* holds every read scope
  const entry = CATALOG[body.type as keyof typeof CATALOG];
  const tenantId = ctx.principal.tenantId;
  const total = await counted(async () => {
    const head = await counted(() => readResource(tenantId, body.type, body.id));
    if (!head.value) throw notFound(entry.label);
    const phases = [phase('read_head', head)];
    const rec = head.value.record;
    let fields: number | null = null;
    if (body.open) {
      const opened = await counted(() => openSecret<Record<string, unknown>>(tenantId, rec, head.value!.sealed));
      phases.push(phase('open_sealed', opened));
      fields = opened.value ? Object.keys(opened.value).length : 0;
    }
    return { phases, version: rec.version, fields };
  });
  return {
    request: { operation: 'read', type: body.type, id: body.id, open: body.open },
    result: { found: true, version: total.value.version, ...(total.value.fields !== null ? { sealed_fields: total.value.fields } : {}) },
    total: phase('total', total),
    phases: total.value.phases,
  };
}
