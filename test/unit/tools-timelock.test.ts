import { describe, expect, it } from 'vitest';
import { timelockState } from '../../lib/tools/timelock/service.js';
import { capacity } from '../../lib/tools/steg/steg.js';
import { findSecrets, shannon } from '../../lib/tools/transform/detect.js';

/** The time-lock's release rule with an explicit clock (the HTTP tests wait for real seconds). */
const RELEASE = '2030-01-01T00:00:00.000Z';
const at = (iso: string) => new Date(iso);
const bg = (status: 'armed' | 'pending' | 'vetoed', releaseAfter: string | null) => ({
  delay_seconds: 3600,
  veto_key_hash: null,
  veto_threshold: null,
  status,
  requested_at: null,
  requested_by: null,
  reason: null,
  release_after: releaseAfter,
  vetoed_at: null,
  vetoed_by: null,
  veto_reason: null,
});

describe('time-lock release rule', () => {
  it('is sealed before the release time, with the seconds left, and open from it', () => {
    expect(timelockState({ release_at: RELEASE, break_glass: null }, at('2029-12-31T23:59:00Z'))).toEqual({
      released: false,
      opens_at: RELEASE,
      seconds_left: 60,
      by: 'time',
    });
    expect(timelockState({ release_at: RELEASE, break_glass: null }, at(RELEASE)).released).toBe(true);
    expect(timelockState({ release_at: RELEASE, break_glass: null }, at('2029-12-31T23:59:59.001Z')).seconds_left).toBe(1);
  });

  it('a pending break-glass opens at the end of its delay; a vetoed or armed one never does', () => {
    const early = '2029-06-01T00:00:00.000Z';
    expect(timelockState({ release_at: RELEASE, break_glass: bg('pending', early) }, at('2029-05-31T23:00:00Z'))).toMatchObject({ released: false, seconds_left: 3600 });
    expect(timelockState({ release_at: RELEASE, break_glass: bg('pending', early) }, at(early))).toMatchObject({ released: true, by: 'break_glass' });
    expect(timelockState({ release_at: RELEASE, break_glass: bg('vetoed', early) }, at('2029-07-01T00:00:00Z'))).toMatchObject({ released: false, opens_at: RELEASE });
    expect(timelockState({ release_at: RELEASE, break_glass: bg('armed', null) }, at('2029-07-01T00:00:00Z')).released).toBe(false);
    // a delay ending after the release time changes nothing
    expect(timelockState({ release_at: RELEASE, break_glass: bg('pending', '2031-01-01T00:00:00Z') }, at(RELEASE))).toMatchObject({ released: true, by: 'time' });
  });
});

describe('tool helpers', () => {
  it('steg capacity: 3 LSBs a pixel, minus the salt and the frame', () => {
    expect(capacity({ width: 320, height: 200 })).toBe(Math.floor((320 * 200 * 3 - 128) / 8) - 32);
    expect(capacity({ width: 4, height: 4 })).toBe(0);
  });

  it('entropy: repeated characters score low, random ones high', () => {
    expect(shannon('aaaaaaaaaaaaaaaaaaaaaaaa')).toBe(0);
    expect(shannon('abcdefghijklmnopqrstuvwxyzABCDEF')).toBe(5);
    expect(findSecrets('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')).toEqual([]);
    expect(findSecrets('0123456789abcdef0123456789abcdef')[0]).toMatchObject({ rule: 'high-entropy-string', preview: '0123…(32 characters)' });
  });
});
