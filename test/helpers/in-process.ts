import { join } from 'node:path';
import { inject, vi } from 'vitest';

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

/**
 * The runtime's configuration with `env` over it (a table of the file's own, a queue, a
 * switch), for this file only; returns what undoes it (call it in afterAll).
 *
 * lib/ reads its configuration once (lib/config.ts) and binds its clients when first imported.
 * The source project runs test files one after another in a worker, without isolation
 * (vitest.config.ts), so a file that configures lib/ otherwise gets its own instances of lib/
 * (vi.resetModules: its next imports evaluate afresh) and, when it is done, leaves the
 * runtime's configuration and fresh instances to the next file. Call before the file's first
 * dynamic import of lib modules.
 */
export function useOwnConfig(env: Record<string, string>): () => void {
  const before = { ...process.env };
  useRuntimeConfig();
  Object.assign(process.env, env);
  vi.resetModules();
  return () => {
    for (const name of Object.keys(process.env)) if (!(name in before)) delete process.env[name];
    Object.assign(process.env, before);
    vi.resetModules();
  };
}
