import { beforeAll, describe, expect, it } from 'vitest';
import { api, errorCode, newAccount, unique, type TestAccount } from '../helpers/api.js';

/** ACME enrollment refuses a directory it must not reach before any request is made to it. */
let a: TestAccount;
beforeAll(async () => {
  a = await newAccount('acme-refusals');
});

describe('POST /api/v1/certificates/enroll (acme): the directory URL is checked like a webhook receiver', () => {
  it.each([
    ['https://10.1.2.3/dir', 'destination 10.1.2.3 is a private address'],
    ['https://169.254.169.254/latest', 'destination 169.254.169.254 is a link-local / metadata address'],
    ['ftp://acme.example.com/dir', 'scheme ftp is not allowed (http or https only)'],
  ])('%s: 400 with the reason', async (url, reason) => {
    const res = await api('POST', '/api/v1/certificates/enroll', { key: a.adminKey, body: { name: unique('acme'), sans: { dns: ['svc.example.com'] }, acme: { directory_url: url } } });
    const who = `POST /api/v1/certificates/enroll as the account admin's key, acme.directory_url ${url}: got ${res.status} ${res.body?.error ?? ''}`;
    expect(res.status, who).toBe(400);
    expect(errorCode(res), who).toBe('bad_request');
    expect(res.body.error, who).toBe(`acme.directory_url refused: ${reason}`);
  });
});
