import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { buildOpenApi } from '../../scripts/openapi.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The OpenAPI document built once for the run (test/setup/responses.ts holds every response to it). */
    openapiFile: string;
  }
}

/** Builds the OpenAPI document once per run, for the response check of every test file (test/setup/responses.ts). */
export default async (project: TestProject) => {
  const dir = mkdtempSync(join(tmpdir(), 'secrets-api-openapi-'));
  const file = join(dir, 'openapi.json');
  const started = Date.now();
  process.stderr.write(`${project.name}: building the OpenAPI document\n`);
  writeFileSync(file, JSON.stringify(await buildOpenApi()));
  process.stderr.write(`${project.name}: OpenAPI document built (${Math.round((Date.now() - started) / 1000)} s)\n`);
  project.provide('openapiFile', file);
  return () => rmSync(dir, { recursive: true, force: true });
};
