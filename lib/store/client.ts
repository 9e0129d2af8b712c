import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { Agent } from 'node:https';
import { Agent as HttpAgent } from 'node:http';
import { config } from '../config.js';
import { observeClient } from '../http/metrics.js'; // X-Ray subsegment per call (issue 25)

let doc: DynamoDBDocumentClient | undefined;

/** The document client, a module singleton reused across warm invocations. */
export function db(): DynamoDBDocumentClient {
  if (!doc) {
    const cfg = config();
    const local = cfg.DYNAMODB_ENDPOINT !== undefined;
    const client = observeClient(
      new DynamoDBClient({
        region: cfg.AWS_REGION,
        ...(local
          ? {
              endpoint: cfg.DYNAMODB_ENDPOINT,
              credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
            }
          : {}),
        maxAttempts: 3,
        requestHandler: new NodeHttpHandler({
          httpAgent: new HttpAgent({ keepAlive: true, maxSockets: 64 }),
          httpsAgent: new Agent({ keepAlive: true, maxSockets: 64 }),
          connectionTimeout: 2000,
          requestTimeout: 5000,
        }),
      }),
    );
    doc = DynamoDBDocumentClient.from(client, {
      marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
    });
  }
  return doc;
}

export const tableName = (): string => config().TABLE_NAME;
