import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import { ARTIFACT_CONTROL_FILE } from './artifact.js';

/**
 * The tests' hook into the artifact runtime's Lambda host: retires the idle execution
 * environments of the function serving `method path` (`/api/v1/secrets/{name}`: the resource's
 * path) as Lambda's shutdown does (SIGTERM when the runtime registered an extension, 500 ms,
 * then the end: scripts/local/artifact/host.ts `retire`). Resolves once they have exited.
 */
export async function retireEnvironments(method: string, path: string): Promise<{ retired: number; terminated: number }> {
  if (inject('runtime') !== 'artifact') throw new Error('only the artifact runtime has execution environments to retire');
  const { url } = JSON.parse(readFileSync(join(inject('dataDir'), ARTIFACT_CONTROL_FILE), 'utf8')) as { url: string };
  const res = await fetch(`${url}/retire?${new URLSearchParams({ method, path })}`, { method: 'POST' });
  const body = (await res.json()) as { retired: number; terminated: number; error?: string };
  if (!res.ok) throw new Error(`retire ${method} ${path}: ${res.status} ${body.error}`);
  return body;
}
