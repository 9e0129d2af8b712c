import { badRequest } from '../core/errors.js';

/**
 * Rejects JSON nested deeper than `maxDepth` before it is parsed, in one pass over the
 * text (strings and escapes skipped), so a hostile body costs O(n) and no recursion.
 */
export function assertJsonDepth(text: string, maxDepth: number): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > maxDepth) throw badRequest(`JSON body nested deeper than ${maxDepth} levels`, undefined, 'json_too_deep');
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
  }
}

export function parseJsonBody(text: string, maxDepth: number): unknown {
  assertJsonDepth(text, maxDepth);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw badRequest('request body is not valid JSON', undefined, 'invalid_json');
  }
}
