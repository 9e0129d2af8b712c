import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startContractService } from '../helpers/contract-service.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where each test file's request/response check (test/setup/responses.ts) leaves its counts for the run's total. */
    contractDir: string;
    /** The project's contract service (test/helpers/contract-service.ts): each test file sends it every exchange to check. */
    contractService: string;
  }
}

/** The counts one test file leaves (test/setup/responses.ts). */
export interface ContractCounts {
  requests: number;
  responses: number;
  requestMismatches: number;
  responseMismatches: number;
  /** Requests the document calls invalid that the server refused too (a test's deliberate bad input). */
  refusedInvalid: number;
  /** Requests the document calls valid that the server refused as invalid: a rule the schema does not carry (route, field and rule). */
  uncarried: string[];
  /** Requests the server took (2xx/3xx) that the document calls invalid, each with what the document refuses (each also fails the test that sent it). */
  requestMismatchList: string[];
}

/** Counts before any request: one file's start (test/setup/responses.ts) and the run's total. */
export const noCounts = (): ContractCounts => ({
  requests: 0,
  responses: 0,
  requestMismatches: 0,
  responseMismatches: 0,
  refusedInvalid: 0,
  uncarried: [],
  requestMismatchList: [],
});

const SHARED = Symbol.for('secrets-api:contract-service');
type Shared = { readonly file: string; readonly started: ReturnType<typeof startContractService>; users: number };

/** The run's service for `file`, started by its first user; closed when its last user releases it. */
function useContractService(file: string): { url: Promise<string>; release: () => Promise<void> } {
  const g = globalThis as { [SHARED]?: Shared };
  const shared = g[SHARED]?.file === file ? g[SHARED] : (g[SHARED] = { file, started: startContractService(file), users: 0 });
  shared.users++;
  return {
    url: shared.started.then((s) => s.url),
    release: async () => {
      if (--shared.users > 0) return;
      if (g[SHARED] === shared) delete g[SHARED];
      await (await shared.started).close();
    },
  };
}

/**
 * The run's total of the check of every request and response against the OpenAPI document
 * (test/setup/responses.ts): printed when the run ends, e.g. `source: OpenAPI contract over 4
 * files: 1,234 requests and 1,234 responses checked; 0 description/server mismatches (requests
 * 0, responses 0)`. A mismatch also fails the test that met it.
 * It also starts the run's contract service (test/helpers/contract-service.ts) in this, the
 * vitest main process, on a free port of 127.0.0.1: it reads the document once, when the first
 * exchange comes (test/setup/openapi.ts writes it while the run starts), and keeps one ajv
 * instance with its compiled validators for every file of both runtime projects (one
 * document per run); the last project's teardown closes it.
 */
export default async (project: TestProject) => {
  const dir = mkdtempSync(join(tmpdir(), 'secrets-api-contract-'));
  project.provide('contractDir', dir);
  const service = useContractService(project.getProvidedContext().openapiFile);
  project.provide('contractService', await service.url);
  return async () => {
    await service.release();
    const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
    const total = noCounts();
    for (const f of files) {
      const c = JSON.parse(readFileSync(join(dir, f), 'utf8')) as ContractCounts;
      total.requests += c.requests;
      total.responses += c.responses;
      total.requestMismatches += c.requestMismatches;
      total.responseMismatches += c.responseMismatches;
      total.refusedInvalid += c.refusedInvalid;
      total.uncarried.push(...c.uncarried);
      total.requestMismatchList.push(...(c.requestMismatchList ?? []));
    }
    rmSync(dir, { recursive: true, force: true });
    if (files.length === 0) return;
    const n = (x: number) => x.toLocaleString('en-US');
    process.stderr.write(
      `${project.name}: OpenAPI contract over ${files.length} test files: ${n(total.requests)} requests and ${n(total.responses)} responses checked` +
        ` (${n(total.refusedInvalid)} deliberately invalid requests refused); ` +
        `${n(total.requestMismatches + total.responseMismatches)} description/server mismatches (requests ${n(total.requestMismatches)}, responses ${n(total.responseMismatches)})\n`,
    );
    // each request the server took and the document refuses: the route and the document's first objection
    const taken = [...new Set(total.requestMismatchList.map((m) => m.split('\n')[0]!.slice(0, 400)))].sort();
    if (taken.length > 0) {
      process.stderr.write(
        `${project.name}: ${n(total.requestMismatchList.length)} requests the server took that the document refuses (${taken.length} distinct, each failed its test):\n${taken.map((r) => `  ${r}`).join('\n')}\n`,
      );
    }
    const rules = [...new Set(total.uncarried)].sort();
    if (rules.length > 0) {
      process.stderr.write(
        `${project.name}: ${n(total.uncarried.length)} requests valid by the document refused by a rule its schemas do not carry (${rules.length} rules):\n${rules.map((r) => `  ${r}`).join('\n')}\n`,
      );
    }
  };
};
