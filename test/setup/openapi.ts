import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { buildOpenApi } from '../../scripts/openapi.js';
import { reportFailure } from './runtime.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The OpenAPI document built once for the run (test/setup/responses.ts holds every response to it). */
    openapiFile: string;
  }
}

/**
 * Builds the OpenAPI document once per run for the response check of every test file
 * (test/setup/responses.ts), for both runtime projects, beside the tiers that need none: the
 * setup returns at once and each test file waits for the document (test/setup/ready.ts). A
 * build that fails leaves `<file>.error` with its cause.
 */
export default (project: TestProject) => {
  const dir = join(tmpdir(), `secrets-api-openapi-${process.pid}`);
  const file = join(dir, 'openapi.json');
  project.provide('openapiFile', file);
  let first = true;
  try {
    mkdirSync(dir);
  } catch {
    first = false; // the other runtime project builds it
  }
  if (first) {
    const started = Date.now();
    process.stderr.write(`${project.name}: building the OpenAPI document\n`);
    buildOpenApi().then(
      (doc) => {
        writeFileSync(`${file}.part`, JSON.stringify(doc));
        renameSync(`${file}.part`, file);
        process.stderr.write(`${project.name}: OpenAPI document built (${Math.round((Date.now() - started) / 1000)} s)\n`);
      },
      (error: Error) => {
        reportFailure(`the OpenAPI document did not build: ${error.message}`, error.stack ?? '');
        writeFileSync(`${file}.error`, error.message);
      },
    );
  }
  return () => rmSync(dir, { recursive: true, force: true });
};
