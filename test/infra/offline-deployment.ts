import { readAssembly } from '../../scripts/local/artifact/assembly.js';
import { bucketName } from '../../scripts/local/artifact/buckets.js';
import { bucketsOf, queuesOf, readDeployment, tablesOf } from '../../scripts/local/artifact/deployment.js';
import { iamModel } from '../../scripts/local/artifact/iam.js';
import { queueName } from '../../scripts/local/artifact/sources.js';
import { synthesize } from './synth.js';

/**
 * The default templates read as the artifact runtime reads them, without starting it: every
 * table named `table`, the queues at an address nothing listens on, the buckets by their local
 * names. What the IAM tests evaluate calls against (iam-evaluation.test.ts, iam-negative.test.ts).
 */
export function offlineDeployment(table: string) {
  const assembly = readAssembly(synthesize().dir);
  const world = {
    tables: new Map(tablesOf(assembly).map((t) => [t.key, table])),
    queues: new Map(queuesOf(assembly).map((q) => [q.key, `http://127.0.0.1:1/000000000000/${queueName(q)}`])),
    buckets: new Map(bucketsOf(assembly).map((k) => [k, bucketName(k)])),
  };
  return { deployment: readDeployment(assembly, world), model: iamModel(assembly, world) };
}
