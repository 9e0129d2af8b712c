import { describe, expect, it } from 'vitest';
import { COLLECTIONS, checkApiKey, checkApiUrl } from '../../cli/api.js';
import { buildEnvironment } from '../../cli/environment.js';
import { generateApiKey } from '../../lib/auth/api-keys.js';
import { CATALOG } from '../../lib/catalog.js';

describe('the CLI’s own rules, against the server’s', () => {
  it('reads every typed collection of the catalogue (credentials, passwords, wallets)', () => {
    const typed = Object.values(CATALOG)
      .filter((e) => (e.family === 'credentials' && !e.key) || e.family === 'passwords' || ['code_signing_key', 'jks_keystore'].includes(e.type))
      .filter((e) => e.crossType)
      .map((e) => e.collection)
      .sort();
    expect([...COLLECTIONS].sort()).toEqual(typed);
  });

  it('takes every key the server issues and answers a mistake with the fix', () => {
    for (let i = 0; i < 50; i++) expect(checkApiKey(generateApiKey().key)).toMatch(/^scm_/);
    expect(() => checkApiKey('Bearer scm_x')).toThrow(/is not an API key/);
    expect(checkApiUrl('https://api.example.com/')).toBe('https://api.example.com');
    expect(checkApiUrl('http://127.0.0.1:4400/prefix')).toBe('http://127.0.0.1:4400/prefix');
    expect(() => checkApiUrl('localhost:4400')).toThrow('SECRETS_API_URL "localhost:4400" has no scheme: use https://localhost:4400');
    expect(() => checkApiUrl('https://x.test/api/v1')).toThrow('without it (https://x.test)');
  });

  it('refuses two sources of one variable, naming both; a chosen name settles it', () => {
    expect(() => buildEnvironment([{ name: 'db-password', data: { value: 'a' } }, { name: 'db.password', data: { value: 'b' } }])).toThrow(
      'DB_PASSWORD would come from both secret "db-password" and secret "db.password"',
    );
    expect(buildEnvironment([{ name: 'db-password', data: { value: 'a' } }, { name: 'db.password', data: { value: 'b' }, as: 'OTHER' }])).toEqual({
      DB_PASSWORD: 'a',
      OTHER: 'b',
    });
    expect(() => buildEnvironment([{ name: 'x', data: { value: 'a' } }], { X: 'b' })).toThrow('X would come from both secret "x" and variable "X"');
  });
});
