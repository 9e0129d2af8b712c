import { inject } from 'vitest';
import { join } from 'node:path';

/**
 * Points this test process's lib/ configuration at the suite's runtime (its DynamoDB Local
 * and its keyring), so a test can call library code directly against the same table.
 * Call before the first dynamic import of lib modules.
 */
export function useRuntimeConfig(): void {
  Object.assign(process.env, {
    TABLE_NAME: inject('tableName'),
    DYNAMODB_ENDPOINT: inject('dynamoEndpoint'),
    KEY_PROVIDER: 'local',
    LOCAL_MASTER_KEY_FILE: join(inject('dataDir'), 'keyring', 'master.key'),
    AWS_REGION: 'us-east-1',
  });
}
