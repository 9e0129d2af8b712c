import { describe, expect, it } from 'vitest';
import { idlePause } from '../../scripts/local/streams.js';

/** The local stream poller's pause between reads of a shard (scripts/local/streams.ts). */
describe('the stream poller reads a quiet shard less often', () => {
  it("reads four times a second while records come (Lambda's rate) and for 2 s of quiet after", () => {
    for (const empty of [0, 1, 8]) expect(idlePause(empty)).toBe(250);
  });

  it('then doubles each pause up to a second', () => {
    expect([9, 10, 11, 12, 40].map(idlePause)).toEqual([500, 1000, 1000, 1000, 1000]);
  });
});
