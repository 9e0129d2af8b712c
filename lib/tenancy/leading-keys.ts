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

const all = (list: (string | undefined)[]): string[] | undefined =>
  list.length > 0 && list.every((k) => k !== undefined) ? (list as string[]) : undefined;

export function partitionKeys(command: string, input: Input): string[] | undefined {
  switch (command.replace(/Command$/, '')) {
    case 'GetItem':
    case 'DeleteItem':
    case 'UpdateItem':
      return all([pkOf(input.Key)]);
    case 'PutItem':
      return all([pkOf(input.Item)]);
    case 'Query': {
      const key = queryKey(input);
      return key === undefined ? undefined : [key];
    }
    case 'BatchGetItem':
      return all(Object.values((input.RequestItems ?? {}) as Record<string, { Keys?: unknown[] }>).flatMap((t) => (t.Keys ?? []).map(pkOf)));
    case 'BatchWriteItem':
      return all(
        Object.values((input.RequestItems ?? {}) as Record<string, Input[]>).flatMap((writes) =>
          writes.map((w) => pkOf((w.PutRequest as Input | undefined)?.Item ?? (w.DeleteRequest as Input | undefined)?.Key)),
        ),
      );
    case 'TransactWriteItems':
    case 'TransactGetItems':
      return all(
        ((input.TransactItems ?? []) as Record<string, Input>[]).map((t) => {
          const op = t.Put ?? t.Update ?? t.Delete ?? t.ConditionCheck ?? t.Get;
          return pkOf(op?.Item ?? op?.Key);
        }),
      );
    default:
      return undefined;
  }
}
