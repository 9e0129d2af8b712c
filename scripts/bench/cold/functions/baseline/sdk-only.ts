/**
 * bench:cold's SDK-only baseline: the DynamoDB client and document client that every
 * handler's data access needs (lib/store/client.ts), bundled the same way, nothing else.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';

let doc: DynamoDBDocumentClient | undefined;

export const handler = async (event: { id?: string }) => {
  doc ??= DynamoDBDocumentClient.from(new DynamoDBClient({}));
  const out = await doc.send(new GetCommand({ TableName: process.env.TABLE_NAME, Key: { pk: event.id ?? 'x', sk: 'x' } }));
  return { statusCode: 200, body: JSON.stringify(out.Item ?? null) };
};
