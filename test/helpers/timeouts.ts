/**
 * A test's or hook's own time limit, scaled as the suite's defaults are (vitest.config.ts
 * `timeoutScale`: TEST_TIMEOUT_SCALE, or the load per core when the run started, which the
 * config hands every worker as TEST_TIMEOUT_SCALE). `it('…', fn, scaled(240_000))`.
 */
export function scaled(ms: number): number {
  const scale = Number(process.env.TEST_TIMEOUT_SCALE);
  return Number.isFinite(scale) && scale > 0 ? Math.round(ms * scale) : ms;
}
