import { describe, expect, it } from 'vitest';
import type { TestSpecification } from 'vitest/node';
import LongestFirst from '../setup/sequencer.js';

/**
 * The suite's order (test/setup/sequencer.ts): longest first, from vitest's cache when it has
 * the file, else from test/setup/durations.json; the source project's files before the
 * artifact's within a group; the groups as sequence.groupOrder says.
 */
const ROOT = '/repo';
const spec = (project: string, file: string, groupOrder = 1) =>
  ({ project: { name: project, config: { sequence: { groupOrder } } }, moduleId: `${ROOT}/${file}` }) as unknown as TestSpecification;
const order = async (specs: TestSpecification[], cached: Record<string, number> = {}, sizes: Record<string, number> = {}) => {
  const ctx = {
    config: { root: ROOT },
    cache: {
      getFileTestResults: (key: string) => (key in cached ? { duration: cached[key], failed: false } : undefined),
      getFileStats: (key: string) => (key in sizes ? { size: sizes[key] } : undefined),
    },
  };
  const sorted = await new LongestFirst(ctx as never).sort(specs);
  return sorted.map((s) => `${s.project.name}:${s.moduleId.slice(ROOT.length + 1)}`);
};

describe('the order the suite starts its files in', () => {
  it('starts the recorded longest first (the route matrix before a larger, quicker file), then the larger', async () => {
    const files = [
      spec('artifact', 'test/api/unknown-small.test.ts'),
      spec('artifact', 'test/api/unknown-large.test.ts'),
      spec('artifact', 'test/api/route-matrix.test.ts'),
    ];
    expect(await order(files, {}, { 'artifact:test/api/unknown-large.test.ts': 9_000, 'artifact:test/api/unknown-small.test.ts': 10 })).toEqual([
      'artifact:test/api/route-matrix.test.ts',
      'artifact:test/api/unknown-large.test.ts',
      'artifact:test/api/unknown-small.test.ts',
    ]);
  });

  it("prefers this machine's cached duration to the recorded one", async () => {
    const files = [spec('artifact', 'test/api/route-matrix.test.ts'), spec('artifact', 'test/api/unknown-small.test.ts')];
    expect(await order(files, { 'artifact:test/api/unknown-small.test.ts': 500_000 })).toEqual([
      'artifact:test/api/unknown-small.test.ts',
      'artifact:test/api/route-matrix.test.ts',
    ]);
  });

  it("runs the groups in order, and the source project's files before the artifact's within one", async () => {
    const files = [
      spec('artifact', 'test/api/route-matrix.test.ts'),
      spec('source', 'test/runtime/webhooks-queue.test.ts'),
      spec('infra', 'test/infra/variants.test.ts', 0),
      spec('unit', 'test/unit/routes.test.ts', 0),
    ];
    expect(await order(files)).toEqual([
      'infra:test/infra/variants.test.ts',
      'unit:test/unit/routes.test.ts',
      'source:test/runtime/webhooks-queue.test.ts',
      'artifact:test/api/route-matrix.test.ts',
    ]);
  });
});
