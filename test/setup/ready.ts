import { existsSync, readFileSync } from 'node:fs';
import { inject } from 'vitest';

/**
 * A setup file of the projects that talk to a runtime (source, artifact): the test file waits
 * here until the run's OpenAPI document is built (test/setup/openapi.ts) and its project's
 * runtime listens (test/setup/runtime.ts writes the ready file), so both are made while the
 * tiers that need neither run. A runtime that did not start fails the file with the cause its
 * setup recorded (the same words as the run's first FAIL line). The setups' own clocks bound
 * the wait: each start step has a budget (RUNTIME_*_TIMEOUT_S), after which the ready file
 * holds the cause.
 */
const until = async (done: () => boolean) => {
  while (!done()) await new Promise((r) => setTimeout(r, 250));
};
const openapi = inject('openapiFile');
await until(() => existsSync(openapi) || existsSync(`${openapi}.error`));
if (!existsSync(openapi)) throw new Error(`the OpenAPI document did not build: ${readFileSync(`${openapi}.error`, 'utf8')}`);
const ready = inject('runtimeReadyFile');
await until(() => existsSync(ready));
const state = JSON.parse(readFileSync(ready, 'utf8')) as { ok?: boolean; error?: string };
if (!state.ok) throw new Error(`the ${inject('runtime')} runtime did not start: ${state.error}`);
