import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * Faults and probes on the library's own DynamoDB client (lib/store/client.ts db()),
 * through the SDK's public middleware stack: no seam in the code under test. The hook sees
 * each command's name (`GetItemCommand`, `UpdateItemCommand`, ...) and its input as the
 * code wrote it; it may throw (a failing or refused write), answer instead of the table,
 * or return undefined to let the call through to DynamoDB Local.
 */
export type Hook = (command: string, input: Record<string, any>) => { output: Record<string, unknown> } | undefined | Promise<{ output: Record<string, unknown> } | undefined>;

let seq = 0;
export function intercept(client: DynamoDBDocumentClient, hook: Hook): () => void {
  const name = `unit-fault-${++seq}`;
  client.middlewareStack.add(
    (next, context) => async (args: any) => {
      const answer = await hook(String(context.commandName), args.input as Record<string, any>);
      if (answer) return { output: { $metadata: {}, ...answer.output }, response: {} } as never;
      return next(args);
    },
    { step: 'initialize', name, priority: 'high' },
  );
  return () => {
    client.middlewareStack.remove(name);
  };
}

/** The error DynamoDB answers a failed condition with, carrying the item (ReturnValuesOnConditionCheckFailure ALL_OLD), as the SDK builds it. */
export async function conditionFailed(item?: Record<string, unknown>) {
  const { ConditionalCheckFailedException } = await import('@aws-sdk/client-dynamodb');
  const { marshall } = await import('@aws-sdk/util-dynamodb');
  return new ConditionalCheckFailedException({
    message: 'The conditional request failed',
    $metadata: {},
    ...(item ? { Item: marshall(item) } : {}),
  });
}
