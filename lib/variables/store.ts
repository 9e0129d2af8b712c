import * as z from 'zod/v4';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { CallContext } from '../auth/principal.js';
import { commit } from '../audit/audit.js';
import { badRequest, conflict, notFound } from '../core/errors.js';
import { nowIso } from '../ids.js';
import { resourceType } from '../catalog.js';
import { db, tableName } from '../store/client.js';
import { entity, nullable } from '../store/entity.js';
import { keys } from '../store/keys.js';
import { queryPage } from '../store/pagination.js';
import { actorName } from '../resources/store.js';
import { TxConditionFailed, type TxItem } from '../store/tx.js';
import { credentialFields, findCredential } from './fields.js';

/**
 * Named variables (spec "Variables"): a name bound to one field of one credential of the
 * account. Item `T#<tid> / VAR#<name>`; it holds the binding only, never a value: values
 * are read from the credential at resolution (lib/variables/resolve.ts).
 *
 * Names: 1–128 characters, letters, digits and `_`, not starting with a digit
 * (`DB_PASSWORD`), case-sensitive. (`resolve` cannot be managed through the API: the literal
 * route POST /variables/resolve owns that path segment.)
 */
export const VARIABLE_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

export interface Variable {
  readonly name: string;
  readonly credential_id: string;
  readonly credential_type: string;
  readonly field: string;
  readonly description: string;
  readonly version: number;
  readonly created_at: string;
  readonly updated_at: string;
  readonly created_by: string | null;
  readonly updated_by: string | null;
}

const VariableItem = entity(
  'variable',
  z.object({
    name: z.string(),
    credential_id: z.string(),
    credential_type: z.string(),
    field: z.string(),
    description: z.string().default(''),
    version: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
    created_by: nullable(z.string()),
    updated_by: nullable(z.string()),
  }),
);
const FIELDS = VariableItem.fields;
export const toVariable = (item: Record<string, unknown>): Variable => VariableItem.parse(item);

async function readVariable(tenantId: string, name: string): Promise<Variable | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.variable(tenantId, name), ConsistentRead: true }));
  return out.Item ? toVariable(out.Item) : undefined;
}

export async function getVariable(ctx: CallContext, name: string): Promise<Variable> {
  const v = await readVariable(ctx.principal.tenantId, name);
  if (!v) throw notFound('variable');
  return v;
}

export async function listVariables(ctx: CallContext, page: { limit: number; offset: number; cursor?: string | undefined }) {
  const out = await queryPage<Record<string, unknown>>({
    pk: keys.tenant(ctx.principal.tenantId).pk,
    prefix: keys.variablePrefix,
    limit: page.limit,
    offset: page.cursor ? 0 : page.offset,
    ...(page.cursor ? { cursor: page.cursor } : {}),
    projection: FIELDS,
  });
  return { variables: out.items.map(toVariable), nextCursor: out.nextCursor };
}

interface BindInput {
  readonly credential_id: string;
  readonly field: string;
  readonly description?: string | undefined;
}

/**
 * Creates or rebinds a variable. The credential must exist in the caller's account (else
 * 404, the same for another account's id) and have the field now (else 400); the head's
 * existence is re-checked inside the write transaction.
 */
export async function putVariable(ctx: CallContext, name: string, input: BindInput): Promise<{ variable: Variable; created: boolean }> {
  const tid = ctx.principal.tenantId;
  const credential = await findCredential(tid, input.credential_id);
  if (!credential) throw notFound('credential');
  if (!resourceType(credential.type))
    throw badRequest(`a ${credential.type} cannot be bound to a variable`, [{ path: 'body.credential_id', message: 'not a credential' }]);
  const fields = await credentialFields(tid, credential);
  if (!fields.has(input.field)) {
    // (the credential's other field names are not listed: the caller may lack its read scope)
    throw badRequest('the credential has no field of this name that a variable can bind', [
      { path: 'body.field', message: 'no such bindable field' },
    ]);
  }
  const current = await readVariable(tid, name);
  const at = nowIso();
  const variable: Variable = {
    name,
    credential_id: credential.id,
    credential_type: credential.type,
    field: input.field,
    description: input.description ?? current?.description ?? '',
    version: (current?.version ?? 0) + 1,
    created_at: current?.created_at ?? at,
    updated_at: at,
    created_by: current?.created_by ?? actorName(ctx),
    updated_by: actorName(ctx),
  };
  const items: TxItem[] = [
    {
      Put: {
        TableName: tableName(),
        Item: { ...keys.variable(tid, name), ...variable },
        ConditionExpression: current ? 'version = :v' : 'attribute_not_exists(pk)',
        ...(current ? { ExpressionAttributeValues: { ':v': current.version } } : {}),
      },
    },
    {
      ConditionCheck: {
        TableName: tableName(),
        Key: credential.key,
        ConditionExpression: 'id = :id',
        ExpressionAttributeValues: { ':id': credential.id },
      },
    },
  ];
  const kind = current ? 'updated' : 'created';
  try {
    await commit(ctx, tid, items, {
      action: `variable.${current ? 'update' : 'create'}`,
      resource: { type: 'variable', id: name, name },
      detail: { resource_type: credential.type, resource_id: credential.id, field: input.field },
      event: { type: `variable.${kind}`, data: { name, resource_id: credential.id, resource_type: credential.type, field: input.field } },
    });
  } catch (error) {
    if (error instanceof TxConditionFailed) {
      if (error.index === 1) throw notFound('credential');
      throw conflict('the variable was changed concurrently; read it again before retrying', 'conflict');
    }
    throw error;
  }
  return { variable, created: !current };
}

export async function deleteVariable(ctx: CallContext, name: string): Promise<Variable> {
  const tid = ctx.principal.tenantId;
  const current = await readVariable(tid, name);
  if (!current) throw notFound('variable');
  try {
    await commit(
      ctx,
      tid,
      [
        {
          Delete: {
            TableName: tableName(),
            Key: keys.variable(tid, name),
            ConditionExpression: 'version = :v',
            ExpressionAttributeValues: { ':v': current.version },
          },
        },
      ],
      {
        action: 'variable.delete',
        resource: { type: 'variable', id: name, name },
        event: {
          type: 'variable.deleted',
          data: { name, resource_id: current.credential_id, resource_type: current.credential_type, field: current.field },
        },
      },
    );
  } catch (error) {
    if (error instanceof TxConditionFailed) throw conflict('the variable was changed concurrently; read it again before retrying', 'conflict');
    throw error;
  }
  return current;
}
