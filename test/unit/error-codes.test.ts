import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../lib/http/error-codes.js';
import { buildOpenApi } from '../../scripts/openapi.js';

/**
 * Every machine code a handler or library throws is in the one catalogue
 * (lib/http/error-codes.ts): the code arguments of every HttpError construction and error
 * helper in lib/ and functions/ are read from the source and looked up.
 */
function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? files(join(dir, n)) : n.endsWith('.ts') ? [join(dir, n)] : []));
}

const THROW_SITES = [
  /new HttpError\(\d+, '([a-z_]+)'/g,
  /\b(?:badRequest|forbidden|conflict|unauthorized|signatureError)\([^;]*?'([a-z_]+)'\)/g,
  /\boauthError\('([a-z_]+)'/g,
  /'(temp_access)_\$\{/g,
];

describe('error-code catalogue', () => {
  it('holds every code thrown in lib/ and functions/', () => {
    const used = new Set<string>();
    for (const f of [...files('lib'), ...files('functions')]) {
      const src = readFileSync(f, 'utf8');
      for (const re of THROW_SITES) for (const m of src.matchAll(re)) used.add(m[1]!);
    }
    used.delete('temp_access');
    for (const s of ['revoked', 'expired', 'used']) used.add(`temp_access_${s}`);
    expect(used.size).toBeGreaterThan(40);
    expect([...used].filter((c) => !(c in ERROR_CODES))).toEqual([]);
  });

  it('gives each code one status and a meaning, and the OpenAPI document publishes them', async () => {
    for (const [code, [status, meaning]] of Object.entries(ERROR_CODES)) {
      expect(status >= 400 && status < 600, code).toBe(true);
      expect(meaning.length, code).toBeGreaterThan(5);
    }
    const doc = (await buildOpenApi()) as {
      components: { schemas: { Error: { properties: { code: { enum: string[] } } } } };
      'x-error-codes': unknown[];
    };
    expect(doc.components.schemas.Error.properties.code.enum).toEqual(Object.keys(ERROR_CODES));
    expect(doc['x-error-codes']).toHaveLength(Object.keys(ERROR_CODES).length);
  });
});
