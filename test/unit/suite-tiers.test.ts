import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import config, { ARTIFACT_SKIPPED_API_FILES, LOCAL_PROJECTS } from '../../vitest.config.js';

/**
 * How the tiers share the HTTP suite (README, "How the source and artifact tiers share the
 * work"): `npm test` runs every project but the artifact, the HTTP suite on the source
 * runtime; `npm run test:artifact` runs it through the built bundles; CI runs both.
 */
type Project = { test: { name: string; include: string[]; exclude?: string[] } };
const projects = (config.test?.projects ?? []) as Project[];
const project = (name: string) => projects.find((p) => p.test.name === name)!.test;

describe('the tiers and the HTTP suite', () => {
  it('npm test runs every project but the artifact', () => {
    expect(projects.map((p) => p.test.name).filter((n) => !(LOCAL_PROJECTS as readonly string[]).includes(n))).toEqual(['artifact']);
    expect(LOCAL_PROJECTS.every((n) => projects.some((p) => p.test.name === n))).toBe(true);
  });

  it('every HTTP file runs on both runtimes, but the authorization matrix on the sources only', () => {
    expect(project('source').include).toContain('test/api/**/*.test.ts');
    expect(project('source').exclude ?? []).toEqual([]);
    expect(project('artifact').include).toContain('test/api/**/*.test.ts');
    expect(project('artifact').exclude).toEqual(ARTIFACT_SKIPPED_API_FILES);
  });

  it('CI runs npm test and then the artifact tier, which runs only the artifact project', () => {
    const ci = readFileSync('.ci/run', 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '' && !l.startsWith('#'));
    expect(ci.indexOf('npm run test:artifact')).toBeGreaterThan(ci.indexOf('npm test'));
    expect(ci.indexOf('npm test')).toBeGreaterThan(-1);
    const scripts = JSON.parse(readFileSync('package.json', 'utf8')).scripts as Record<string, string>;
    expect(scripts['test:artifact']).toBe('tsx scripts/coverage/run.ts --artifact');
  });
});
