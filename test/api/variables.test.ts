import { beforeAll, describe, expect, it } from 'vitest';
import { api, canary, errorCode, newAccount, unique, type TestAccount } from '../helpers/api.js';

/**
 * Named variables: bindings of a name to one field of a credential of the account, and
 * their resolution (names or `${{ vars.NAME }}` templates), all or nothing, with the
 * caller's read scope checked for every underlying credential.
 */
let acct: TestAccount;
let other: TestAccount;
const values = { user: canary('var-user'), pass: canary('var-pass'), dbpass: canary('var-dbpass'), foreign: canary('var-foreign') };
let secretId: string;
let integrationId: string;
let foreignSecretId: string;

async function putVar(key: string, name: string, body: unknown) {
  return api('PUT', `/api/v1/variables/${name}`, { key, body });
}

beforeAll(async () => {
  [acct, other] = await Promise.all([newAccount('vars'), newAccount('vars-other')]);
  const secret = await api('POST', '/api/v1/secrets', {
    key: acct.adminKey,
    body: { name: unique('app'), data: { username: values.user, password: values.pass } },
  });
  expect(secret.status, secret.text).toBe(201);
  secretId = secret.body.data.secret.id;
  const integration = await api('POST', '/api/v1/integrations', {
    key: acct.adminKey,
    body: {
      name: unique('pg'),
      provider: 'postgresql',
      host: 'db.example.test',
      port: 5432,
      database: 'app',
      username: 'app_admin',
      password: values.dbpass,
      tls_mode: 'verify-full',
    },
  });
  expect(integration.status, integration.text).toBe(201);
  integrationId = integration.body.data.integration.id;
  const foreign = await api('POST', '/api/v1/secrets', { key: other.adminKey, body: { name: unique('theirs'), data: { token: values.foreign } } });
  expect(foreign.status).toBe(201);
  foreignSecretId = foreign.body.data.secret.id;
});

describe('variable bindings', () => {
  it('PUT binds (201) and rebinds (200); GET one and list; DELETE; metadata only, never a value', async () => {
    const key = await acct.key(['variables:read', 'variables:write']);
    const created = await putVar(key, 'APP_USER', { credential_id: secretId, field: 'username', description: 'login of the app' });
    expect(created.status, created.text).toBe(201);
    expect(created.body.data.variable).toMatchObject({
      name: 'APP_USER',
      credential_id: secretId,
      credential_type: 'secret',
      field: 'username',
      description: 'login of the app',
      version: 1,
    });
    const rebound = await putVar(key, 'APP_USER', { credential_id: secretId, field: 'password' });
    expect(rebound.status).toBe(200);
    expect(rebound.body.data.variable).toMatchObject({
      field: 'password',
      version: 2,
      description: 'login of the app',
      created_at: created.body.data.variable.created_at,
    });
    expect((await putVar(key, 'DB_PASSWORD', { credential_id: integrationId, field: 'password' })).status).toBe(201);
    expect((await putVar(key, 'DB_HOST', { credential_id: integrationId, field: 'host' })).status).toBe(201);

    const one = await api('GET', '/api/v1/variables/APP_USER', { key });
    expect(one.status).toBe(200);
    expect(one.body.data.variable.field).toBe('password');
    const list = await api('GET', '/api/v1/variables?limit=2', { key });
    expect(list.status).toBe(200);
    expect(list.body.data.total).toBe(2);
    const rest = await api('GET', `/api/v1/variables?cursor=${list.body.data.next_cursor}`, { key });
    expect([...list.body.data.variables, ...rest.body.data.variables].map((v: { name: string }) => v.name).sort()).toEqual([
      'APP_USER',
      'DB_HOST',
      'DB_PASSWORD',
    ]);
    for (const r of [created, rebound, one, list, rest]) for (const v of Object.values(values)) expect(r.text).not.toContain(v);

    const removed = await api('DELETE', '/api/v1/variables/DB_HOST', { key });
    expect(removed.status).toBe(200);
    expect(removed.body.data).toEqual({ deleted: true, variable: { name: 'DB_HOST' } });
    expect((await api('GET', '/api/v1/variables/DB_HOST', { key })).status).toBe(404);
    expect((await api('DELETE', '/api/v1/variables/DB_HOST', { key })).status).toBe(404);
  });

  it('a credential of another account, or a missing one, is 404 with one body', async () => {
    const foreign = await putVar(acct.adminKey, 'THEIRS', { credential_id: foreignSecretId, field: 'token' });
    expect(foreign.status).toBe(404);
    const missing = await putVar(acct.adminKey, 'THEIRS', { credential_id: '0190a1b2-0000-7000-8000-0000000000aa', field: 'token' });
    expect(missing.status).toBe(404);
    expect({ error: foreign.body.error, code: foreign.body.code }).toEqual({ error: missing.body.error, code: missing.body.code });
    expect(foreign.text).not.toContain(values.foreign);
    // and another account's variables are invisible
    expect((await putVar(other.adminKey, 'OTHER_TOKEN', { credential_id: foreignSecretId, field: 'token' })).status).toBe(201);
    expect((await api('GET', '/api/v1/variables/OTHER_TOKEN', { key: acct.adminKey })).status).toBe(404);
    expect((await api('DELETE', '/api/v1/variables/OTHER_TOKEN', { key: acct.adminKey })).status).toBe(404);
    const resolved = await api('POST', '/api/v1/variables/resolve', { key: acct.adminKey, body: { names: ['OTHER_TOKEN'] } });
    expect(resolved.status).toBe(404);
    expect(resolved.text).not.toContain(values.foreign);
  });

  it('400 for a field the credential lacks, bad names, wrong types and unknown fields', async () => {
    const noField = await putVar(acct.adminKey, 'NOPE', { credential_id: secretId, field: 'no_such_field' });
    expect(noField.status).toBe(400);
    expect(noField.body.details).toEqual([{ path: 'body.field', message: 'no such bindable field' }]);
    // description and tags are not fields of the credential
    expect((await putVar(acct.adminKey, 'NOPE', { credential_id: integrationId, field: 'description' })).status).toBe(400);
    for (const [name, body] of [
      ['9STARTS_WITH_DIGIT', { credential_id: secretId, field: 'username' }],
      ['has-dash', { credential_id: secretId, field: 'username' }],
      ['OK', { credential_id: 'not-a-uuid', field: 'username' }],
      ['OK', { credential_id: secretId, field: 5 }],
      ['OK', { credential_id: secretId, field: 'username', value: 'x' }],
      ['OK', { credential_id: secretId }],
    ] as const) {
      const res = await putVar(acct.adminKey, name, body);
      expect(res.status, `${name} ${JSON.stringify(body)}`).toBe(400);
      expect(errorCode(res)).toBe('validation_failed');
    }
    expect((await api('GET', '/api/v1/variables/bad-name', { key: acct.adminKey })).status).toBe(400);
    expect((await api('GET', '/api/v1/variables?limit=0', { key: acct.adminKey })).status).toBe(400);
  });
});

describe('variable resolution', () => {
  beforeAll(async () => {
    for (const [name, credential_id, field] of [
      ['R_USER', () => secretId, 'username'],
      ['R_PASS', () => secretId, 'password'],
      ['R_DBPASS', () => integrationId, 'password'],
      ['R_DBHOST', () => integrationId, 'host'],
    ] as const) {
      const res = await putVar(acct.adminKey, name, { credential_id: credential_id(), field });
      expect([200, 201]).toContain(res.status);
    }
  });

  it('resolves names and ${{ vars.NAME }} templates', async () => {
    const key = await acct.key(['variables:read', 'secrets:read', 'credentials:read']);
    const byName = await api('POST', '/api/v1/variables/resolve', { key, body: { names: ['R_USER', 'R_DBPASS', 'R_DBHOST', 'R_USER'] } });
    expect(byName.status, byName.text).toBe(200);
    expect(byName.body.data).toEqual({
      values: { R_USER: values.user, R_DBPASS: values.dbpass, R_DBHOST: 'db.example.test' },
      variables: ['R_USER', 'R_DBPASS', 'R_DBHOST'],
    });

    const template = 'postgres://${{ vars.R_USER }}:${{vars.R_PASS}}@${{ vars.R_DBHOST }}/app?again=${{ vars.R_USER }} $x ${not} {{ vars.R_USER }}';
    const rendered = await api('POST', '/api/v1/variables/resolve', { key, body: { template } });
    expect(rendered.status, rendered.text).toBe(200);
    expect(rendered.body.data).toEqual({
      result: `postgres://${values.user}:${values.pass}@db.example.test/app?again=${values.user} $x \${not} {{ vars.R_USER }}`,
      variables: ['R_USER', 'R_PASS', 'R_DBHOST'],
    });
    expect((await api('POST', '/api/v1/variables/resolve', { key, body: { template: 'no references' } })).body.data).toEqual({
      result: 'no references',
      variables: [],
    });
  });

  it('one forbidden variable fails the whole call, names it, and reveals no value', async () => {
    // secrets:read but not credentials:read: the integration's variable is denied
    const key = await acct.key(['variables:read', 'secrets:read']);
    const res = await api('POST', '/api/v1/variables/resolve', { key, body: { names: ['R_USER', 'R_DBPASS', 'R_PASS'] } });
    expect(res.status).toBe(403);
    expect(errorCode(res)).toBe('forbidden');
    expect(res.body.details).toEqual([{ path: 'vars.R_DBPASS', message: 'access to the bound credential denied' }]);
    for (const v of Object.values(values)) expect(res.text).not.toContain(v);
    const tpl = await api('POST', '/api/v1/variables/resolve', { key, body: { template: 'u=${{ vars.R_USER }} p=${{ vars.R_DBPASS }}' } });
    expect(tpl.status).toBe(403);
    for (const v of Object.values(values)) expect(tpl.text).not.toContain(v);
    // with only its own credentials' scope, it works
    const fine = await api('POST', '/api/v1/variables/resolve', { key, body: { names: ['R_USER'] } });
    expect(fine.status).toBe(200);
  });

  it('a missing variable, credential or field fails the whole call naming each; forbidden wins over missing', async () => {
    const key = await acct.key(['variables:read', 'secrets:read', 'credentials:read']);
    const missing = await api('POST', '/api/v1/variables/resolve', { key, body: { names: ['R_USER', 'NOT_BOUND', 'ALSO_NOT'] } });
    expect(missing.status).toBe(404);
    expect(missing.body.details).toEqual([
      { path: 'vars.NOT_BOUND', message: 'no such variable' },
      { path: 'vars.ALSO_NOT', message: 'no such variable' },
    ]);
    expect(missing.text).not.toContain(values.user);

    const narrow = await acct.key(['variables:read', 'secrets:read']);
    const both = await api('POST', '/api/v1/variables/resolve', { key: narrow, body: { names: ['NOT_BOUND', 'R_DBHOST'] } });
    expect(both.status).toBe(403);
    expect(both.body.details.map((d: { path: string }) => d.path)).toEqual(['vars.NOT_BOUND', 'vars.R_DBHOST']);

    // the credential is deleted after binding
    const doomed = await api('POST', '/api/v1/secrets', { key: acct.adminKey, body: { name: unique('doomed'), data: { v: canary('doomed') } } });
    expect((await putVar(acct.adminKey, 'DOOMED', { credential_id: doomed.body.data.secret.id, field: 'v' })).status).toBe(201);
    expect((await api('DELETE', `/api/v1/secrets/${doomed.body.data.secret.name}`, { key: acct.adminKey })).status).toBe(200);
    const gone = await api('POST', '/api/v1/variables/resolve', { key, body: { names: ['DOOMED'] } });
    expect(gone.status).toBe(404);
    expect(gone.body.details).toEqual([{ path: 'vars.DOOMED', message: 'the bound credential no longer exists' }]);

    // the field is removed from the credential after binding
    const sec = await api(
      'GET',
      `/api/v1/secrets/${encodeURIComponent((await api('GET', '/api/v1/secrets', { key: acct.adminKey })).body.data.secrets.find((s: { id: string }) => s.id === secretId).name)}`,
      { key: acct.adminKey },
    );
    const upd = await api('PUT', `/api/v1/secrets/${sec.body.data.secret.name}`, {
      key: acct.adminKey,
      body: { data: { username: values.user } },
      headers: { 'if-match': sec.headers.get('etag')! },
    });
    expect(upd.status).toBe(200);
    const noField = await api('POST', '/api/v1/variables/resolve', { key, body: { names: ['R_USER', 'R_PASS'] } });
    expect(noField.status).toBe(404);
    expect(noField.body.details).toEqual([{ path: 'vars.R_PASS', message: 'the bound field no longer exists' }]);
    expect(noField.text).not.toContain(values.user);
  });

  it('needs variables:read; refuses malformed requests', async () => {
    const noVars = await acct.key(['secrets:read', 'credentials:read']);
    const denied = await api('POST', '/api/v1/variables/resolve', { key: noVars, body: { names: ['R_USER'] } });
    expect(denied.status).toBe(403);
    expect(errorCode(denied)).toBe('insufficient_scope');
    for (const body of [
      {},
      { names: [] },
      { names: ['R_USER'], template: 'x' },
      { names: ['bad-name'] },
      { names: 'R_USER' },
      { template: '${{ secrets.X }}' },
      { template: '${{ vars.R_USER }} ${{ env.HOME }}' },
      { template: 'x', extra: 1 },
    ]) {
      const res = await api('POST', '/api/v1/variables/resolve', { key: acct.adminKey, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.text).not.toContain(values.user);
    }
  });
});
