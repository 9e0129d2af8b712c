import { describe, expect, it } from 'vitest';
import { timeoutScale } from '../../vitest.config.js';
import { stepTimeoutMs } from '../setup/runtime.js';

/** The runtime setup's clock per start step (test/setup/runtime.ts): it scales with what is waited for. */
describe('the time a runtime start step is given', () => {
  it('gives building and synthesizing their own budget, apart from the steps that only wait for a server', () => {
    expect(stepTimeoutMs('building the function bundles (minutes on a 2-core machine)', {})).toEqual({
      ms: 1_200_000,
      knob: 'RUNTIME_BUILD_TIMEOUT_S',
    });
    expect(stepTimeoutMs('synthesizing the app (cdk synth)', {}).knob).toBe('RUNTIME_BUILD_TIMEOUT_S');
    expect(stepTimeoutMs('waiting for DynamoDB Local to answer on http://127.0.0.1:8000', {})).toEqual({
      ms: 300_000,
      knob: 'RUNTIME_STEP_TIMEOUT_S',
    });
  });

  it("scales the import check with the number of modules, never below a step's own budget", () => {
    expect(stepTimeoutMs("importing each of the 329 functions' modules in a fresh Node 22 process", {}).ms).toBe(987_000);
    expect(stepTimeoutMs("importing each of the 10 functions' modules in a fresh Node 22 process", {}).ms).toBe(300_000);
    expect(stepTimeoutMs("importing each of the 329 functions' modules", { RUNTIME_IMPORT_TIMEOUT_S: '5' }).ms).toBe(1_645_000);
  });

  it('takes each budget from its variable, and ignores a value that is not a positive number', () => {
    expect(stepTimeoutMs('synthesizing the app', { RUNTIME_BUILD_TIMEOUT_S: '60' }).ms).toBe(60_000);
    expect(stepTimeoutMs('creating the table secrets', { RUNTIME_STEP_TIMEOUT_S: '30' }).ms).toBe(30_000);
    expect(stepTimeoutMs('creating the table secrets', { RUNTIME_STEP_TIMEOUT_S: 'soon' }).ms).toBe(300_000);
    expect(stepTimeoutMs('creating the table secrets', { RUNTIME_STEP_TIMEOUT_S: '-1' }).ms).toBe(300_000);
  });
});

/** The suite's test and hook timeouts (vitest.config.ts): one knob, or the machine's load when the run starts. */
describe('the time a test and a hook are given', () => {
  it('scales with the load per core when the run starts, from 1 to 5 times', () => {
    expect(timeoutScale({}, 0.3, 2)).toBe(1);
    expect(timeoutScale({}, 4.2, 2)).toBe(3);
    expect(timeoutScale({}, 48, 2)).toBe(5);
  });

  it('takes TEST_TIMEOUT_SCALE when it is a positive number, whatever the load', () => {
    expect(timeoutScale({ TEST_TIMEOUT_SCALE: '2.5' }, 48, 2)).toBe(2.5);
    expect(timeoutScale({ TEST_TIMEOUT_SCALE: '0' }, 4.2, 2)).toBe(3);
    expect(timeoutScale({ TEST_TIMEOUT_SCALE: 'later' }, 0.1, 2)).toBe(1);
  });
});
