import { readFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api, canary, errorCode, newAccount, rootKey, unique, type TestAccount } from '../helpers/api.js';
import { findLeaks } from '../helpers/leaks.js';
import { parseLdif } from '../../lib/tools/ldif.js';
import { type Slapd, startSlapd, SUFFIX, ROOT_DN } from '../helpers/slapd.js';
import { scaled } from '../helpers/timeouts.js';

/**
 * LDAP search, LDIF export and import (lib/tools/ldap.ts) against a real slapd started for
 * this file, through an integration of provider "ldap" whose bind password is a canary.
 */
let slapd: Slapd;
let acct: TestAccount;
let other: TestAccount;
let key: string;
let connId = '';
const bindPassword = canary('ldap-bind');
const userPassword = canary('ldap-userpw');
const MISSING = '00000000-0000-7000-8000-000000000000';
const PEOPLE = `ou=people,${SUFFIX}`;

beforeAll(async () => {
  slapd = await startSlapd(bindPassword);
  slapd.ldapadd(
    [
      `dn: uid=alice,${PEOPLE}`,
      'objectClass: inetOrgPerson',
      'uid: alice',
      'cn: Alice Liddell',
      'sn: Liddell',
      'mail: alice@example.test',
      `userPassword: ${userPassword}`,
      '',
      `dn: uid=bob,${PEOPLE}`,
      'objectClass: inetOrgPerson',
      'uid: bob',
      'cn: Bob Builder',
      'sn: Builder',
      '',
      // an entry whose uid literally is the injection text
      `dn: cn=literal,${PEOPLE}`,
      'objectClass: inetOrgPerson',
      'cn: literal',
      'sn: Literal',
      'uid: *)(uid=*',
      '',
      // values that LDIF must write as base64: non-ASCII and a leading space
      `dn: uid=zoe,${PEOPLE}`,
      'objectClass: inetOrgPerson',
      'uid: zoe',
      `cn:: ${Buffer.from('Zoë Ünïcode').toString('base64')}`,
      `sn:: ${Buffer.from(' leading space').toString('base64')}`,
      '',
    ].join('\n'),
  );
  [acct, other] = await Promise.all([newAccount('ldap'), newAccount('ldap-other')]);
  key = await acct.key(['ldap:use']);
  const res = await api('POST', '/api/v1/integrations', {
    key: acct.adminKey,
    body: {
      name: unique('dir'),
      provider: 'ldap',
      url: slapd.url,
      bind_dn: ROOT_DN,
      password: bindPassword,
      base_dn: SUFFIX,
      user_filter: '(objectClass=inetOrgPerson)',
    },
  });
  expect(res.status, res.text).toBe(201);
  connId = res.body.data.integration.id;
}, scaled(60_000));

afterAll(async () => {
  await slapd?.stop();
});

const search = (body: unknown, k = key, id = connId) => api('POST', `/api/v1/ldap/connections/${id}/search`, { key: k, body });

describe('POST /api/v1/ldap/connections/{id}/search', () => {
  it('finds an entry by an equality condition, without password attributes', async () => {
    const res = await search({ where: [{ attribute: 'uid', equals: 'alice' }] });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.total).toBe(1);
    const [e] = res.body.data.entries;
    expect(e.dn).toBe(`uid=alice,${PEOPLE}`);
    expect(e.attributes.mail).toEqual(['alice@example.test']);
    expect(e.attributes.userPassword).toBeUndefined();
    expect(res.body.data.filter).toBe('(&(objectClass=inetOrgPerson)(&(uid=alice)))');
  });

  it('escapes an injection attempt: only the entry whose uid is literally that text matches', async () => {
    const res = await search({ where: [{ attribute: 'uid', equals: '*)(uid=*' }] });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.entries.map((e: { dn: string }) => e.dn)).toEqual([`cn=literal,${PEOPLE}`]);
    expect(res.body.data.filter).toContain('(uid=\\2a\\29\\28uid=\\2a)');
    const none = await search({ where: [{ attribute: 'cn', equals: 'Alice*)(|(cn=*' }] });
    expect(none.status, none.text).toBe(200);
    expect(none.body.data.total).toBe(0);
  });

  it('matches substrings and any-of, with a size limit the server enforces', async () => {
    const any = await search({
      where: [
        { attribute: 'uid', equals: 'alice' },
        { attribute: 'cn', starts_with: 'Bob' },
      ],
      match: 'any',
      attributes: ['uid'],
    });
    expect(any.status, any.text).toBe(200);
    expect(any.body.data.entries.map((e: { attributes: { uid: string[] } }) => e.attributes.uid[0]).sort()).toEqual(['alice', 'bob']);
    const contains = await search({ where: [{ attribute: 'cn', contains: 'uil', ends_with: 'er' }] });
    expect(contains.status).toBe(400);
    const sub = await search({ where: [{ attribute: 'cn', contains: 'uil' }], scope: 'one', base_dn: PEOPLE });
    expect(sub.body.data.entries.map((e: { dn: string }) => e.dn)).toEqual([`uid=bob,${PEOPLE}`]);
    const present = await search({ where: [{ attribute: 'mail', present: true }], attributes: ['mail'] });
    expect(present.body.data.total).toBe(1);
    const limited = await search({ where: [{ attribute: 'objectClass', equals: 'inetOrgPerson' }], size_limit: 1 });
    expect(limited.status, limited.text).toBe(200);
    expect(limited.body.data).toMatchObject({ total: 1, truncated: true });
    const all = await search({ where: [{ attribute: 'objectClass', equals: 'inetOrgPerson' }], size_limit: 4 });
    expect(all.body.data).toMatchObject({ total: 4, truncated: false });
    const missingBase = await search({ where: [{ attribute: 'uid', equals: 'x' }], base_dn: `ou=nowhere,${SUFFIX}` });
    expect(missingBase.status).toBe(400);
  });

  it('401, 403, cross-account 404, 400', async () => {
    expect((await search({ where: [{ attribute: 'uid', equals: 'a' }] }, 'scm_bad')).status).toBe(401);
    const wrong = await acct.key(['secrets:read']);
    const denied = await search({ where: [{ attribute: 'uid', equals: 'a' }] }, wrong);
    expect(denied.status).toBe(403);
    expect(errorCode(denied)).toBe('insufficient_scope');
    const otherKey = await other.key(['ldap:use']);
    const foreign = await search({ where: [{ attribute: 'uid', equals: 'a' }] }, otherKey);
    expect(foreign.status).toBe(404);
    expect((await search({ where: [{ attribute: 'uid', equals: 'a' }] }, key, MISSING)).status).toBe(404);
    const bad = await search({ where: [] });
    expect(bad.status).toBe(400);
    expect(errorCode(bad)).toBe('validation_failed');
    expect((await search({ where: [{ attribute: 'ui d', equals: 'a' }] })).status).toBe(400);
  });

  it('a refused bind is a 503 that names the connection, not the password', async () => {
    const res = await api('POST', '/api/v1/integrations', {
      key: acct.adminKey,
      body: { name: unique('dir-bad'), provider: 'ldap', url: slapd.url, bind_dn: ROOT_DN, password: canary('ldap-wrong'), base_dn: SUFFIX },
    });
    const bad = await search({ where: [{ attribute: 'uid', equals: 'alice' }] }, key, res.body.data.integration.id);
    expect(bad.status).toBe(503);
    expect(bad.body.error).toMatch(/refused the bind/);
  });
});

describe('LDAP connections that cannot be used', () => {
  it('a metadata address, a closed port, StartTLS without TLS and an invalid user_filter are 503s naming the problem', async () => {
    const { freePort } = await import('../../scripts/local/ports.js');
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ url: 'ldap://169.254.169.254:389' }, /destination not allowed/],
      [{ url: `ldap://127.0.0.1:${await freePort()}` }, /could not be reached/],
      [{ start_tls: true }, /could not be reached/],
      [{ user_filter: '(objectClass=person' }, /user_filter is not a valid RFC 4515 filter/],
    ];
    for (const [fields, message] of cases) {
      const made = await api('POST', '/api/v1/integrations', {
        key: acct.adminKey,
        body: { name: unique('dir-x'), provider: 'ldap', url: slapd.url, bind_dn: ROOT_DN, password: bindPassword, base_dn: SUFFIX, ...fields },
      });
      expect(made.status, made.text).toBe(201);
      const res = await search({ where: [{ attribute: 'uid', equals: 'alice' }] }, key, made.body.data.integration.id);
      const who = `POST /api/v1/ldap/connections/{id}/search as a key holding ldap:use, connection ${JSON.stringify(fields)}: got ${res.status} ${res.body?.error ?? ''}`;
      expect(res.status, who).toBe(503);
      expect(res.body.error, who).toMatch(message);
    }
  });

  it('an integration of another provider is not an LDAP connection', async () => {
    const made = await api('POST', '/api/v1/integrations', {
      key: acct.adminKey,
      body: { name: unique('smtp'), provider: 'smtp', host: 'smtp.example.test', from_address: 'a@example.test' },
    });
    expect(made.status, made.text).toBe(201);
    expect((await search({ where: [{ attribute: 'uid', equals: 'a' }] }, key, made.body.data.integration.id)).status).toBe(404);
  });
});

describe('GET /api/v1/ldap/export and POST /api/v1/ldap/import', () => {
  it('exports RFC 2849 LDIF: base64 for unsafe values, parents first', async () => {
    const res = await api('GET', `/api/v1/ldap/export?connection_id=${connId}`, { key });
    expect(res.status, res.text).toBe(200);
    const ldif: string = res.body.data.ldif;
    expect(ldif.startsWith('version: 1\n')).toBe(true);
    expect(ldif).toContain(`cn:: ${Buffer.from('Zoë Ünïcode').toString('base64')}`);
    expect(ldif).toContain(`sn:: ${Buffer.from(' leading space').toString('base64')}`);
    expect(ldif).toContain('uid: alice');
    const records = parseLdif(ldif, 1000);
    expect(records[0]!.dn).toBe(SUFFIX);
    expect(records.map((r) => r.dn)).toContain(`uid=zoe,${PEOPLE}`);
    const zoe = records.find((r) => r.dn === `uid=zoe,${PEOPLE}`) as { attributes: Record<string, string[]> };
    expect(zoe.attributes.cn).toEqual(['Zoë Ünïcode']);
    const alice = records.find((r) => r.dn === `uid=alice,${PEOPLE}`) as { attributes: Record<string, unknown> };
    expect(alice.attributes.mail).toEqual(['alice@example.test']);
    const people = await api(
      'GET',
      `/api/v1/ldap/export?connection_id=${connId}&base_dn=${encodeURIComponent(PEOPLE)}&scope=one&object_class=inetOrgPerson`,
      { key },
    );
    expect(people.body.data.entries).toBe(4);
    expect((await api('GET', `/api/v1/ldap/export?connection_id=${connId}&size_limit=2`, { key })).status).toBe(400);
  });

  it('export withholds password attributes as search does: the user password is nowhere in the answer', async () => {
    const res = await api('GET', `/api/v1/ldap/export?connection_id=${connId}`, { key });
    expect(res.status, res.text).toBe(200);
    const ldif: string = res.body.data.ldif;
    expect(ldif).toContain(`dn: uid=alice,${PEOPLE}`);
    for (const form of [userPassword, Buffer.from(userPassword).toString('base64')]) expect(res.text).not.toContain(form);
    for (const r of parseLdif(ldif, 1000)) {
      const names = Object.keys((r as { attributes: Record<string, unknown> }).attributes).map((n) => n.toLowerCase());
      expect(names, r.dn).not.toContain('userpassword');
    }
  });

  it('export: 401, 403, cross-account 404, 400', async () => {
    expect((await api('GET', `/api/v1/ldap/export?connection_id=${connId}`, { key: 'scm_bad' })).status).toBe(401);
    expect((await api('GET', `/api/v1/ldap/export?connection_id=${connId}`, { key: await acct.key(['credentials:read']) })).status).toBe(403);
    expect((await api('GET', `/api/v1/ldap/export?connection_id=${connId}`, { key: await other.key(['ldap:use']) })).status).toBe(404);
    expect((await api('GET', '/api/v1/ldap/export?connection_id=nope', { key })).status).toBe(400);
  });

  it('imports LDIF: a dry run changes nothing, the import adds, modifies and deletes, a re-run reports each failure', async () => {
    const ou = `ou=${unique('imp')},${SUFFIX}`;
    const secretPw = canary('ldap-import-pw');
    const ldif = [
      'version: 1',
      '# a comment',
      `dn: ${ou}`,
      'objectClass: organizationalUnit',
      `ou: ${ou.slice(3, ou.indexOf(','))}`,
      '',
      `dn: uid=carol,${ou}`,
      'objectClass: inetOrgPerson',
      'uid: carol',
      'cn: Carol',
      'sn: Long description that is folded over more than one line because LDIF lines are at',
      '  most seventy-six characters',
      `userPassword: ${secretPw}`,
      '',
      `dn: uid=bob,${PEOPLE}`,
      'changetype: modify',
      'replace: mail',
      'mail: bob@example.test',
      '-',
      '',
    ].join('\n');
    const dry = await api('POST', '/api/v1/ldap/import', { key, body: { connection_id: connId, ldif, dry_run: true } });
    expect(dry.status, dry.text).toBe(200);
    expect(dry.body.data).toMatchObject({ dry_run: true, records: 3, would_apply: 3, applied: 0, failed: 0 });
    expect(() => slapd.ldapsearch(ou, '(objectClass=*)')).toThrow();

    const run = await api('POST', '/api/v1/ldap/import', { key, body: { connection_id: connId, ldif } });
    expect(run.status, run.text).toBe(200);
    expect(run.body.data).toMatchObject({ applied: 3, failed: 0 });
    expect(run.text).not.toContain(secretPw);
    const carol = slapd.ldapsearch(`uid=carol,${ou}`, '(objectClass=*)', 'sn');
    expect(carol.replace(/\n /g, '')).toContain(
      'sn: Long description that is folded over more than one line because LDIF lines are at most seventy-six characters',
    );
    expect(slapd.ldapsearch(`uid=bob,${PEOPLE}`, '(objectClass=*)', 'mail')).toContain('mail: bob@example.test');

    const again = await api('POST', '/api/v1/ldap/import', { key, body: { connection_id: connId, ldif } });
    expect(again.body.data.results.map((r: { status: string }) => r.status)).toEqual(['failed', 'skipped', 'skipped']);
    expect(again.body.data.results[0].error).toBe('the entry already exists');
    const cont = await api('POST', '/api/v1/ldap/import', { key, body: { connection_id: connId, ldif, continue_on_error: true } });
    expect(cont.body.data).toMatchObject({ failed: 2, applied: 1 });
    const dryAgain = await api('POST', '/api/v1/ldap/import', { key, body: { connection_id: connId, ldif, dry_run: true } });
    expect(dryAgain.body.data).toMatchObject({ failed: 2, would_apply: 1 });

    const del = await api('POST', '/api/v1/ldap/import', {
      key,
      body: { connection_id: connId, ldif: `dn: uid=carol,${ou}\nchangetype: delete\n\ndn: ${ou}\nchangetype: delete\n` },
    });
    expect(del.body.data).toMatchObject({ applied: 2 });
    expect(() => slapd.ldapsearch(ou, '(objectClass=*)')).toThrow();
  });

  it('import: 401, 403, cross-account 404, 400 with the LDIF line', async () => {
    const body = { connection_id: connId, ldif: `dn: cn=x,${SUFFIX}\nobjectClass: person\ncn: x\nsn: x\n`, dry_run: true };
    expect((await api('POST', '/api/v1/ldap/import', { key: 'scm_bad', body })).status).toBe(401);
    expect((await api('POST', '/api/v1/ldap/import', { key: await acct.key(['secrets:read']), body })).status).toBe(403);
    expect((await api('POST', '/api/v1/ldap/import', { key: await other.key(['ldap:use']), body })).status).toBe(404);
    const bad = await api('POST', '/api/v1/ldap/import', { key, body: { ...body, ldif: 'dn: cn=x\nnot a line\n' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/LDIF line 2/);
    for (const ldif of [
      'objectClass: x\n',
      'dn: cn=x\nchangetype: moddn\nnewrdn: cn=y\n',
      'dn: cn=x\nphoto:< file:///etc/passwd\n',
      'dn: cn=x\nchangetype: modify\nreplace: cn\ncn: y\n',
      'version: 2\n\ndn: cn=x\ncn: x\n',
      '# only a comment\n',
    ]) {
      const res = await api('POST', '/api/v1/ldap/import', { key, body: { ...body, ldif } });
      expect(res.status, ldif).toBe(400);
    }
  });

  it('no bind or user password reaches the table or the log', async () => {
    await new Promise((r) => setTimeout(r, 200));
    const leaks = await findLeaks({
      dynamoEndpoint: inject('dynamoEndpoint'),
      tableName: inject('tableName'),
      logText: readFileSync(inject('logFile'), 'utf8'),
      extra: [bindPassword, userPassword],
    });
    expect(leaks).toEqual([]);
  });
});

describe('admission before the service reaches out', () => {
  it('a suspended account’s export and search are refused (403) without any connection to its LDAP server', async () => {
    // a TCP listener standing in for the account's LDAP server: it counts connections
    const sockets = new Set<Socket>();
    let connections = 0;
    const listener = createServer((socket) => {
      connections += 1;
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.resume();
    });
    await new Promise<void>((ok) => listener.listen(0, '127.0.0.1', ok));
    try {
      const port = (listener.address() as { port: number }).port;
      const suspended = await newAccount('ldap-suspended');
      const useKey = await suspended.key(['ldap:use']);
      const made = await api('POST', '/api/v1/integrations', {
        key: suspended.adminKey,
        body: {
          name: unique('dir'),
          provider: 'ldap',
          url: `ldap://127.0.0.1:${port}`,
          bind_dn: ROOT_DN,
          password: canary('ldap-s'),
          base_dn: SUFFIX,
        },
      });
      expect(made.status, made.text).toBe(201);
      const id = made.body.data.integration.id;
      const sus = await api('PATCH', `/api/v1/admin/tenants/${suspended.tenantId}/suspend`, { key: rootKey() });
      expect(sus.status, sus.text).toBe(200);
      for (let i = 0; i < 3; i++) {
        const exp = await api('GET', `/api/v1/ldap/export?connection_id=${id}`, { key: useKey });
        expect([exp.status, errorCode(exp)]).toEqual([403, 'tenant_suspended']);
        const found = await api('POST', `/api/v1/ldap/connections/${id}/search`, {
          key: useKey,
          body: { where: [{ attribute: 'uid', equals: 'a' }] },
        });
        expect([found.status, errorCode(found)]).toEqual([403, 'tenant_suspended']);
      }
      // a request after the refused ones: anything the refused runs started has had its chance to connect
      expect((await api('GET', '/api/v1/ldap/export?connection_id=nope', { key: key })).status).toBe(400);
      await new Promise((r) => setTimeout(r, 300));
      expect(connections).toBe(0);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((ok) => listener.close(ok));
    }
  });
});
