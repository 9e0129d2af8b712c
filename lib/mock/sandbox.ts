import type { CallContext } from '../auth/principal.js';
import { config } from '../config.js';
import { containerByRef, createContainer } from '../containers/service.js';
import { CreateContainerBody } from '../containers/schemas.js';
import { HttpError } from '../core/errors.js';
import { CreateSecretBody } from '../secrets/schemas.js';
import { createSecret } from '../secrets/service.js';
import { readResourceByName } from '../resources/store.js';
import { templateOf } from './templates.js';

/**
 * The integrator helpers are off unless the deployment turns them on (MOCK_ROUTES_ENABLED:
 * infra context `mockRoutes`; always on in the embedded runtime). Off, they answer 404 like a
 * path that does not exist.
 */
export function requireMockRoutes(): void {
  if (!config().MOCK_ROUTES_ENABLED) throw new HttpError(404, 'route_not_found', 'no route matches this path');
}

/**
 * Runs a create; false when a concurrent call made the same fixture first (409
 * `already_exists` between the read and the create): idempotent under concurrency too, and
 * never a 409 the route does not document.
 */
async function madeUnlessTaken(create: () => Promise<unknown>): Promise<boolean> {
  try {
    await create();
    return true;
  } catch (error) {
    if (error instanceof HttpError && error.status === 409 && error.code === 'already_exists') return false;
    throw error;
  }
}

export interface ConfigureBody {
  /** How many sample secrets (1..50). */
  readonly secrets: number;
}

/**
 * Seeds the caller's (sandbox) account with deterministic fixtures: a container `sandbox` and
 * `sandbox-secret-<n>` secrets in it (value `example-value-<n>`), made from the templates
 * through the same domain calls as their create routes. Idempotent: what exists is kept and
 * reported as `existing`.
 */
export async function configureSandbox(ctx: CallContext, body: ConfigureBody) {
  const tenantId = ctx.principal.tenantId;
  const containerBody = CreateContainerBody.parse({
    ...templateOf('container')!.body,
    name: 'sandbox',
    description: 'sandbox fixtures (POST /api/v1/mock/configure)',
  });
  let container = await containerByRef(tenantId, containerBody.name);
  const created: { type: string; name: string }[] = [];
  const existing: { type: string; name: string }[] = [];
  if (container) existing.push({ type: 'container', name: containerBody.name });
  else if (await madeUnlessTaken(() => createContainer(ctx, containerBody))) created.push({ type: 'container', name: containerBody.name });
  else existing.push({ type: 'container', name: containerBody.name });
  container ??= (await containerByRef(tenantId, containerBody.name))!;
  const secretTemplate = templateOf('secret')!.body;
  for (let n = 1; n <= body.secrets; n++) {
    const name = `sandbox-secret-${n}`;
    if (await readResourceByName(tenantId, 'secret', name)) {
      existing.push({ type: 'secret', name });
      continue;
    }
    const secret = CreateSecretBody.parse({ ...secretTemplate, name, data: { value: `example-value-${n}` }, container_id: container.id });
    if (await madeUnlessTaken(() => createSecret(ctx, secret))) created.push({ type: 'secret', name });
    else existing.push({ type: 'secret', name });
  }
  return { container_id: container.id, created, existing };
}
