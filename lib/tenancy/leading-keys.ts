/**
 * The partition keys a DynamoDB request touches, read from its input the way IAM's
 * `dynamodb:LeadingKeys` condition key sees them (the table's partition key, or the index's
 * for a query on gsi1). Undefined when the request's keys cannot be told (a Scan, PartiQL, a
 * key condition of another shape): such a request is refused in a tenant scope.
 */
type Input = Record<string, unknown>;

/** A key attribute in either form: plain (document client) or marshalled ({S: "..."}). */
function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && typeof (value as { S?: unknown }).S === 'string') return (value as { S: string }).S;
  return undefined;
}

const pkOf = (item: unknown): string | undefined => text((item as Input | undefined)?.pk);

function queryKey(input: Input): string | undefined {
  const expression = input.KeyConditionExpression;
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (input.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
  if (typeof expression !== 'string') return undefined;
  const match = /^\s*(#?\w+)\s*=\s*(:\w+)/.exec(expression);
  if (!match) return undefined;
  const attribute = match[1]!.startsWith('#') ? names[match[1]!] : match[1];
  const expected = input.IndexName === undefined ? 'pk' : `${String(input.IndexName)}pk`;
  if (attribute !== expected) return undefined;
  return text(values[match[2]!]);
}

/** One item a request touches: its partition key and the IAM action DynamoDB authorizes it by. */
export interface PartitionAccess {
  readonly pk: string;
  /** `GetItem`, `Query`, `UpdateItem`, ...: the action without its `dynamodb:` prefix. */
  readonly action: string;
  /** The item's own request: the input, or a transaction's element (`TransactItems[i].Update`). */
  readonly request: Input;
}

const each = (list: { pk: string | undefined; action: string; request: Input }[]): PartitionAccess[] | undefined =>
  list.length > 0 && list.every((a) => a.pk !== undefined) ? (list as PartitionAccess[]) : undefined;

/**
 * The items a request touches, each with the action IAM checks for it: the request's own
 * action, except in a transaction, which is authorized per item (`Put` → PutItem, `Update` →
 * UpdateItem, `Delete` → DeleteItem, `ConditionCheck` → ConditionCheckItem, `Get` → GetItem).
 */
export function partitionAccesses(command: string, input: Input): PartitionAccess[] | undefined {
  const action = command.replace(/Command$/, '');
  switch (action) {
    case 'GetItem':
    case 'DeleteItem':
    case 'UpdateItem':
      return each([{ pk: pkOf(input.Key), action, request: input }]);
    case 'PutItem':
      return each([{ pk: pkOf(input.Item), action, request: input }]);
    case 'Query': {
      const key = queryKey(input);
      return key === undefined ? undefined : [{ pk: key, action, request: input }];
    }
    case 'BatchGetItem':
      return each(
        Object.values((input.RequestItems ?? {}) as Record<string, { Keys?: unknown[] }>).flatMap((t) =>
          (t.Keys ?? []).map((k) => ({ pk: pkOf(k), action, request: input })),
        ),
      );
    case 'BatchWriteItem':
      return each(
        Object.values((input.RequestItems ?? {}) as Record<string, Input[]>).flatMap((writes) =>
          writes.map((w) => ({
            pk: pkOf((w.PutRequest as Input | undefined)?.Item ?? (w.DeleteRequest as Input | undefined)?.Key),
            action,
            request: input,
          })),
        ),
      );
    case 'TransactWriteItems':
    case 'TransactGetItems':
      return each(
        ((input.TransactItems ?? []) as Record<string, Input>[]).map((t) => {
          const kind = (['Put', 'Update', 'Delete', 'ConditionCheck', 'Get'] as const).find((k) => t[k] !== undefined);
          const op = kind === undefined ? undefined : t[kind];
          return { pk: pkOf(op?.Item ?? op?.Key), action: kind === 'ConditionCheck' ? 'ConditionCheckItem' : `${kind ?? ''}Item`, request: op ?? {} };
        }),
      );
    default:
      return undefined;
  }
}

export function partitionKeys(command: string, input: Input): string[] | undefined {
  return partitionAccesses(command, input)?.map((a) => a.pk);
}
