import { describe, expect, it } from 'vitest';
import { HttpError } from '../../lib/core/errors.js';
import { assertJsonDepth, parseJsonBody } from '../../lib/http/json.js';

/** lib/http/json.ts: the depth limit is checked on the text before parsing; strings and escapes do not count. */
function failure(f: () => unknown) {
  try {
    f();
    return 'passed';
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    return { status: error.status, code: error.code, message: error.message };
  }
}
const tooDeep = (n: number) => ({ status: 400, code: 'json_too_deep', message: `JSON body nested deeper than ${n} levels` });
const nest = (n: number, open = '[', close = ']') => `${open.repeat(n)}${close.repeat(n)}`;

describe('JSON depth limit', () => {
  it('exactly maxDepth levels pass, one more fails, for arrays, objects and a mix', () => {
    expect(failure(() => assertJsonDepth(nest(4), 4))).toBe('passed');
    expect(failure(() => assertJsonDepth(nest(5), 4))).toEqual(tooDeep(4));
    expect(failure(() => assertJsonDepth('{"a":{"b":{"c":{}}}}', 4))).toBe('passed');
    expect(failure(() => assertJsonDepth('{"a":{"b":{"c":{"d":{}}}}}', 4))).toEqual(tooDeep(4));
    expect(failure(() => assertJsonDepth('[{"a":[{"b":1}]}]', 4))).toBe('passed');
    expect(failure(() => assertJsonDepth('[{"a":[{"b":[1]}]}]', 4))).toEqual(tooDeep(4));
  });

  it('closing brackets bring the depth back down: siblings do not add up', () => {
    expect(failure(() => assertJsonDepth(`[${Array(50).fill(nest(3)).join(',')}]`, 4))).toBe('passed');
    expect(failure(() => assertJsonDepth('{"a":{},"b":{},"c":{"d":{}}}', 3))).toBe('passed');
    expect(failure(() => assertJsonDepth('[[],[[]],[[[]]]]', 4))).toBe('passed');
    expect(failure(() => assertJsonDepth('[[],[[]],[[[[]]]]]', 4))).toEqual(tooDeep(4));
  });

  it('brackets inside strings are not nesting, nor are escaped quotes the end of a string', () => {
    expect(failure(() => assertJsonDepth(JSON.stringify({ a: '[[[[[[{{{{{{' }), 2))).toBe('passed');
    expect(failure(() => assertJsonDepth(JSON.stringify({ a: 'x"[[[[[[' }), 2))).toBe('passed');
    expect(failure(() => assertJsonDepth(JSON.stringify({ a: 'back\\slash', b: '[[[[' }), 2))).toBe('passed');
    expect(failure(() => assertJsonDepth(JSON.stringify(['\\', [[[]]]]), 3))).toEqual(tooDeep(3));
    // after a string closes, brackets count again
    expect(failure(() => assertJsonDepth('["]",[[]]]', 2))).toEqual(tooDeep(2));
    expect(failure(() => assertJsonDepth('["]",[[]]]', 3))).toBe('passed');
  });

  it('deep input costs no recursion (a million levels throws the typed error, not a stack overflow)', () => {
    expect(failure(() => assertJsonDepth('['.repeat(1_000_000), 16))).toEqual(tooDeep(16));
  });
});

describe('parseJsonBody', () => {
  it('parses valid JSON within the limit', () => {
    expect(parseJsonBody('{"a":[1,{"b":"c"}]}', 3)).toEqual({ a: [1, { b: 'c' }] });
    expect(parseJsonBody('"x"', 1)).toBe('x');
  });

  it('invalid JSON: 400 invalid_json; too deep wins over invalid (checked first)', () => {
    expect(failure(() => parseJsonBody('{"a":', 4))).toEqual({ status: 400, code: 'invalid_json', message: 'request body is not valid JSON' });
    expect(failure(() => parseJsonBody('', 4))).toMatchObject({ code: 'invalid_json' });
    expect(failure(() => parseJsonBody('[[[[[[', 4))).toEqual(tooDeep(4));
  });
});
