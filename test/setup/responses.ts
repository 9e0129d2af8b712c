import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, inject } from 'vitest';
import { contractClient, contractInterceptor } from '../helpers/contract-service.js';
import { type ContractCounts, noCounts } from './contract.js';

/**
 * Every request a test sends to the runtime (test/helpers/api.ts `api()`, the typed client and
 * any raw `fetch` to its base URL), and every response it receives, is held to the OpenAPI
 * document built for the run (test/setup/openapi.ts), in both directions:
 * - the response: a status the route does not declare, a media type its status does not
 *   declare, or a body that does not match the schema of its status
 *   (test/helpers/response-validator.ts);
 * - the request: path, query and header parameters, media type and body the document calls
 *   invalid but the server accepted (2xx/3xx) (test/helpers/request-validator.ts).
 * The checks run in the project's contract service (test/helpers/contract-service.ts, started
 * by test/setup/contract.ts in the vitest main process: one document and one set of compiled
 * validators for every file); this file sends it each exchange over 127.0.0.1 (node:http, not
 * the fetch it intercepts). A mismatch, or an exchange the service did not check, fails the
 * test that met it (or, outside a test, the file); the counts go to the run's total
 * (test/setup/contract.ts). So the description cannot drift from the code.
 * A request the document calls valid that the server refused as invalid (400
 * `validation_failed`) is counted and listed in the total, not failed: most such rules are ones
 * JSON Schema cannot state (a date in the future, a checksum, an address that parses), which the
 * description gives in words.
 */
const contractDir = inject('contractDir') as string | undefined;
const counts: ContractCounts = noCounts();
const contract = contractInterceptor({
  baseUrl: inject('baseUrl'),
  original: globalThis.fetch,
  check: contractClient(inject('contractService')),
  counts,
});
globalThis.fetch = contract.fetch;

afterEach(contract.flush);
afterAll(async () => {
  await contract.settle();
  if (contractDir && counts.requests + counts.responses > 0) {
    writeFileSync(join(contractDir, `${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}.json`), JSON.stringify(counts));
  }
  await contract.flush();
});
