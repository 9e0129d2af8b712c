import { recordAudit } from '../../lib/audit/audit.js';
import { created, defineHandler, ok } from '../../lib/http/index.js';
import { listPage } from '../../lib/schemas.js';
import { logger } from '../../lib/core/logger.js';
import { resolveVariables, scopeAccess, VariableResolutionError } from '../../lib/variables/resolve.js';
import { deleteVariable, getVariable, listVariables, putVariable } from '../../lib/variables/store.js';
import {
  ListVariablesQuery,
  PutVariableBody,
  ResolveBody,
  Resolved,
  VariableAnswer,
  VariableDeleted,
  VariableList,
  VariableParams,
} from '../../lib/variables/schemas.js';

export const list = defineHandler({
  summary: 'List variables',
  description: 'The account’s variables: names bound to credential fields (never their values).',
  responses: { 200: VariableList },
  errors: ['bad_request'],
  query: ListVariablesQuery,
  async handler({ ctx, query }) {
    const page = await listVariables(ctx, query);
    return ok(listPage('variables', page.variables, page.nextCursor, query));
  },
});

export const get = defineHandler({
  summary: 'Read a variable',
  description: 'The binding of a variable name (the credential and field it resolves to), not its value.',
  responses: { 200: VariableAnswer },
  params: VariableParams,
  async handler({ ctx, params }) {
    return ok({ variable: await getVariable(ctx, params.name) });
  },
});

/** Binds (201) or rebinds (200) a name to a credential's field. */
export const put = defineHandler({
  summary: 'Bind a variable',
  description: 'Binds the name to a field of a credential: 201 when the name is new, 200 when it is rebound.',
  responses: { 200: VariableAnswer, 201: VariableAnswer },
  errors: ['bad_request', 'conflict'],
  params: VariableParams,
  body: PutVariableBody,
  async handler({ ctx, params, body }) {
    const out = await putVariable(ctx, params.name, body);
    return out.created ? created({ variable: out.variable }) : ok({ variable: out.variable });
  },
});

export const remove = defineHandler({
  summary: 'Delete a variable',
  responses: { 200: VariableDeleted },
  params: VariableParams,
  async handler({ ctx, params }) {
    const v = await deleteVariable(ctx, params.name);
    return ok({ deleted: true, variable: { name: v.name } });
  },
});

/**
 * POST /api/v1/variables/resolve (scopes checked here): variables:read for the bindings,
 * and for each credential the read scope of its type. Audited (names, never values).
 */
export const resolve = defineHandler({
  summary: 'Resolve variables',
  description:
    'The values of the named variables, or a template with its `${{ vars.NAME }}` references replaced. Needs `variables:read` and the read scope of every bound credential’s type; a failure names each variable that could not be resolved (403 when one was denied, else 404). Audited, names only.',
  responses: { 200: Resolved },
  errors: ['forbidden', 'not_found', 'bad_request'],
  scopes: ['variables:read'],
  body: ResolveBody,
  async handler({ ctx, body }) {
    const tid = ctx.principal.tenantId;
    try {
      const out = await resolveVariables(ctx, body, scopeAccess(ctx.principal));
      await recordAudit(ctx, tid, {
        action: 'variables.resolve',
        resource: { type: 'variable', id: out.names.join(',').slice(0, 1024) },
        detail: { names: out.names, credentials: out.credentials.map((c) => ({ type: c.type, id: c.id })) },
      });
      return ok(out.result !== undefined ? { result: out.result, variables: out.names } : { values: out.values, variables: out.names });
    } catch (error) {
      if (error instanceof VariableResolutionError) {
        await recordAudit(ctx, tid, {
          action: 'variables.resolve',
          outcome: error.status === 403 ? 'denied' : 'failure',
          resource: {
            type: 'variable',
            id: error.failures
              .map((f) => f.name)
              .join(',')
              .slice(0, 1024),
          },
          detail: { failures: error.failures.map((f) => ({ name: f.name, reason: f.reason })) },
        }).catch((e: unknown) => logger.warn('could not audit a failed variable resolution', { error: e as Error }));
      }
      throw error;
    }
  },
});
