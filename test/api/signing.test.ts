/**
 * Operation-only signing through the local gateway against the runtime's real SoftHSM2
 * token (created by scripts/local/softhsm.ts under the suite's DATA_DIR): keys generated
 * inside the token via POST /api/v1/code-signing-keys, signatures from every algorithm
 * verified with node:crypto and with openssl against the exported public key, the token
 * refusing to reveal a private key's value, message limits, tenancy, the audit entry.
 */
import { createHash, createPublicKey, randomBytes, verify, constants } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import pkcs11js from 'pkcs11js';
import { api, canary, errorCode, newAccount, type TestAccount } from '../helpers/api.js';
import { useRuntimeConfig } from '../helpers/in-process.js';
import { softHsmModule, softHsmPaths } from '../../scripts/local/softhsm.js';
import { fileDirectory } from '../helpers/scratch.js';

const SIGN = '/api/v1/crypto/sign';
const MiB = 1024 * 1024;

let a: TestAccount;
let b: TestAccount;
let aSign: string;
let aCreate: string;
let aRead: string;
let bSign: string;
const tmp = fileDirectory('signing-api-');

interface Created {
  id: string;
  spec: string;
  algorithm: string;
  publicKey: string;
  keyHandle: string;
}
const created: Record<string, Created> = {};

async function createKey(key: string, body: Record<string, unknown>) {
  return api('POST', '/api/v1/code-signing-keys', { key, body: { name: `hsm-${randomBytes(3).toString('hex')}`, backend: 'pkcs11', ...body } });
}

async function signOk(key: string, id: string, message: Buffer, purpose = 'test') {
  const res = await api('POST', SIGN, { key, body: { backend: 'pkcs11', key_id: id, message: message.toString('base64'), purpose } });
  if (res.status !== 200) throw new Error(`sign failed: ${res.status} ${res.text}`);
  return res.body.data as { signature: string; algorithm: string; key_id: string; audit_id: string };
}

/** node:crypto verification, per the documented encodings (ECDSA: DER). */
function nodeVerify(algorithm: string, publicKey: string, message: Buffer, signature: Buffer): boolean {
  const key = createPublicKey(publicKey);
  switch (algorithm) {
    case 'ECDSA_P256_SHA256':
    case 'RSA_PKCS1_SHA256':
      return verify('sha256', message, key, signature);
    case 'ECDSA_P384_SHA384':
      return verify('sha384', message, key, signature);
    case 'RSA_PSS_SHA256':
      return verify('sha256', message, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }, signature);
    case 'ED25519':
      return verify(null, message, key, signature);
    default:
      throw new Error(algorithm);
  }
}

/**
 * openssl verification: `openssl dgst -verify` for ECDSA and RSA; Ed25519 through
 * `openssl pkeyutl -verify -rawin` (OpenSSL 3.0's dgst has no one-shot EdDSA).
 */
function opensslVerify(algorithm: string, publicKey: string, message: Buffer, signature: Buffer): string {
  const n = randomBytes(4).toString('hex');
  const [pub, msg, sig] = ['pub.pem', 'msg.bin', 'sig.bin'].map((f) => join(tmp, `${n}-${f}`)) as [string, string, string];
  writeFileSync(pub, publicKey);
  writeFileSync(msg, message);
  writeFileSync(sig, signature);
  const args: Record<string, string[]> = {
    ECDSA_P256_SHA256: ['dgst', '-sha256', '-verify', pub, '-signature', sig, msg],
    ECDSA_P384_SHA384: ['dgst', '-sha384', '-verify', pub, '-signature', sig, msg],
    RSA_PKCS1_SHA256: ['dgst', '-sha256', '-verify', pub, '-signature', sig, msg],
    RSA_PSS_SHA256: ['dgst', '-sha256', '-sigopt', 'rsa_padding_mode:pss', '-sigopt', 'rsa_pss_saltlen:32', '-verify', pub, '-signature', sig, msg],
    ED25519: ['pkeyutl', '-verify', '-pubin', '-inkey', pub, '-rawin', '-in', msg, '-sigfile', sig],
  };
  try {
    return execFileSync('openssl', args[algorithm]!, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch (error) {
    return `FAILED: ${(error as { stdout?: string }).stdout ?? ''}`;
  }
}

async function auditItem(tenantId: string, auditId: string): Promise<Record<string, any> | undefined> {
  const { db, tableName } = await import('../../lib/store/client.js');
  const { keys } = await import('../../lib/store/keys.js');
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.audit(tenantId, auditId), ConsistentRead: true }));
  return out.Item;
}

const SPECS: Array<[string, Record<string, unknown>, string]> = [
  ['EC_P256', { algorithm: 'EC_P256' }, 'ECDSA_P256_SHA256'],
  ['EC_P384', { algorithm: 'ecdsa-p384' }, 'ECDSA_P384_SHA384'],
  ['ED25519', { algorithm: 'Ed25519' }, 'ED25519'],
  ['RSA_2048', { algorithm: 'RSA_2048' }, 'RSA_PKCS1_SHA256'],
  ['RSA_3072', { algorithm: 'rsa-3072', signing_algorithm: 'RSA_PSS_SHA256' }, 'RSA_PSS_SHA256'],
  ['RSA_4096', { algorithm: 'RSA_4096', signing_algorithm: 'RSA_PKCS1_SHA256' }, 'RSA_PKCS1_SHA256'],
];

beforeAll(async () => {
  useRuntimeConfig();
  [a, b] = await Promise.all([newAccount('sign-a'), newAccount('sign-b')]);
  [aSign, aCreate, aRead, bSign] = await Promise.all([
    a.key(['keys:sign']),
    a.key(['credentials:read', 'credentials:write']),
    a.key(['credentials:read', 'export:read']),
    b.key(['keys:sign']),
  ]);
  const results = await Promise.all(SPECS.map(([, body]) => createKey(aCreate, body)));
  results.forEach((res, i) => {
    const [spec, , algorithm] = SPECS[i]!;
    if (res.status !== 201) throw new Error(`${spec}: ${res.status} ${res.text}`);
    const k = res.body.data.code_signing_key;
    created[spec] = { id: k.id, spec, algorithm, publicKey: k.public_key, keyHandle: k.key_handle };
  });
});

describe('GET /api/v1/crypto/backends', () => {
  it('lists pkcs11 (reachable, token label, mechanisms) and kms (unavailable locally)', async () => {
    const res = await api('GET', '/api/v1/crypto/backends', { key: aRead });
    expect(res.status).toBe(200);
    const byName = Object.fromEntries(res.body.data.backends.map((x: any) => [x.name, x]));
    expect(byName.pkcs11).toMatchObject({ configured: true, reachable: true, status: 'available', token_label: 'secrets-api' });
    if (inject('runtime') === 'artifact') {
      // as deployed with CloudHSM: this function is outside the VPC and asks the CloudHSM API
      // (the artifact runtime's stand-in cluster has one ACTIVE HSM), it opens no PKCS#11 session
      expect(byName.pkcs11.mechanisms).toBeUndefined();
      expect(byName.pkcs11.algorithms).toEqual(expect.arrayContaining(['ECDSA_P256_SHA256', 'ED25519']));
    } else {
      expect(byName.pkcs11.mechanisms).toEqual(expect.arrayContaining(['CKM_ECDSA', 'CKM_EDDSA', 'CKM_SHA256_RSA_PKCS', 'CKM_SHA256_RSA_PKCS_PSS']));
    }
    expect(byName.pkcs11.key_specs).toEqual(['EC_P256', 'EC_P384', 'ED25519', 'RSA_2048', 'RSA_3072', 'RSA_4096']);
    expect(byName.kms).toMatchObject({ configured: false, reachable: false, status: 'unavailable' });
    expect(res.text).not.toMatch(/pin/i);
  });
});

describe('keys generated inside the token', () => {
  it('creation answers the public key and handle only: no private key, not exportable, no secret fields', () => {
    for (const k of Object.values(created)) {
      expect(k.publicKey).toMatch(/^-----BEGIN PUBLIC KEY-----/);
      expect(k.keyHandle).toMatch(new RegExp(`^${a.tenantId}/[0-9a-f-]{36}$`));
    }
  });

  it('the export returns the public key only; asking for the private key is refused', async () => {
    const k = created.EC_P256!;
    const res = await api('GET', `/api/v1/code-signing-keys/${k.id}/export`, { key: aRead });
    expect(res.status).toBe(200);
    const out = res.body.data.code_signing_key;
    expect(out).toMatchObject({ id: k.id, backend: 'pkcs11', public_key: k.publicKey, exportable: false });
    expect(out.private_key).toBeUndefined();
    expect(res.text).not.toMatch(/PRIVATE KEY/);
    const priv = await api('GET', `/api/v1/code-signing-keys/${k.id}/export?include_private_key=true`, { key: aRead });
    expect(priv.status).toBe(403);
    const get = await api('GET', `/api/v1/code-signing-keys/${k.id}`, { key: aRead });
    expect(get.status).toBe(200);
    expect(get.body.data.code_signing_key).toMatchObject({
      backend: 'pkcs11',
      key_spec: 'EC_P256',
      signing_algorithm: 'ECDSA_P256_SHA256',
      secret_fields: [],
    });
    expect(get.text).not.toMatch(/PRIVATE KEY/);
  });

  it('reading a private key value through PKCS#11 is refused (CKR_ATTRIBUTE_SENSITIVE); it is sensitive and never extractable', () => {
    const paths = softHsmPaths(inject('dataDir'));
    process.env.SOFTHSM2_CONF = paths.conf;
    const { pin } = JSON.parse(readFileSync(paths.pins, 'utf8')) as { pin: string };
    const lib = new pkcs11js.PKCS11();
    lib.load(softHsmModule()!);
    lib.C_Initialize();
    try {
      const slot = lib.C_GetSlotList(true).find((s) => lib.C_GetTokenInfo(s).label.trim() === 'secrets-api');
      expect(slot).toBeDefined();
      const session = lib.C_OpenSession(slot!, pkcs11js.CKF_SERIAL_SESSION);
      lib.C_Login(session, pkcs11js.CKU_USER, pin);
      for (const k of Object.values(created)) {
        lib.C_FindObjectsInit(session, [
          { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY },
          { type: pkcs11js.CKA_LABEL, value: k.keyHandle },
        ]);
        const found = lib.C_FindObjects(session, 2);
        lib.C_FindObjectsFinal(session);
        expect(found, k.spec).toHaveLength(1);
        const secretAttr = k.spec.startsWith('RSA') ? pkcs11js.CKA_PRIVATE_EXPONENT : pkcs11js.CKA_VALUE;
        let code: string | undefined;
        try {
          lib.C_GetAttributeValue(session, found[0]!, [{ type: secretAttr }]);
        } catch (error) {
          code = (error as Error).message;
        }
        expect(code, k.spec).toBe('CKR_ATTRIBUTE_SENSITIVE');
        const flags = lib
          .C_GetAttributeValue(session, found[0]!, [
            { type: pkcs11js.CKA_SENSITIVE },
            { type: pkcs11js.CKA_EXTRACTABLE },
            { type: pkcs11js.CKA_ALWAYS_SENSITIVE },
            { type: pkcs11js.CKA_NEVER_EXTRACTABLE },
            { type: pkcs11js.CKA_TOKEN },
          ])
          .map((x) => x.value[0]);
        expect(flags, k.spec).toEqual([1, 0, 1, 1, 1]);
      }
      lib.C_CloseSession(session);
    } finally {
      lib.C_Finalize();
      lib.close();
    }
  });
});

describe('POST /api/v1/crypto/sign', () => {
  it.each(SPECS.map(([spec]) => spec))('%s: the signature verifies with node:crypto and openssl against the exported public key', async (spec) => {
    const k = created[spec]!;
    const exported = await api('GET', `/api/v1/code-signing-keys/${k.id}/export`, { key: aRead });
    const publicKey = exported.body.data.code_signing_key.public_key as string;
    const message = Buffer.concat([Buffer.from(`${spec} release artifact\n`), randomBytes(4000)]);
    const out = await signOk(aSign, k.id, message, `release ${spec}`);
    expect(out.algorithm).toBe(k.algorithm);
    expect(out.key_id).toBe(k.id);
    const signature = Buffer.from(out.signature, 'base64');
    expect(nodeVerify(out.algorithm, publicKey, message, signature)).toBe(true);
    expect(nodeVerify(out.algorithm, publicKey, Buffer.concat([message, Buffer.from('x')]), signature)).toBe(false);
    expect(opensslVerify(out.algorithm, publicKey, message, signature)).toMatch(/Verified OK|Signature Verified Successfully/);
    if (out.algorithm.startsWith('ECDSA')) expect(signature[0]).toBe(0x30); // DER SEQUENCE, as documented
  });

  it('message limits: 0 bytes and 1 MiB + 1 byte → 400, exactly 1 MiB → 200; invalid base64 → 400', async () => {
    const id = created.EC_P256!.id;
    const body = (message: string) => ({ backend: 'pkcs11', key_id: id, message, purpose: 'limits' });
    const empty = await api('POST', SIGN, { key: aSign, body: body('') });
    expect(empty.status).toBe(400);
    expect(errorCode(empty)).toBe('validation_failed');
    const over = await api('POST', SIGN, { key: aSign, body: body(randomBytes(MiB + 1).toString('base64')) });
    expect(over.status).toBe(400);
    expect(over.body.details[0].path).toBe('body.message');
    const exact = randomBytes(MiB);
    const ok = await api('POST', SIGN, { key: aSign, body: body(exact.toString('base64')) });
    expect(ok.status).toBe(200);
    expect(nodeVerify('ECDSA_P256_SHA256', created.EC_P256!.publicKey, exact, Buffer.from(ok.body.data.signature, 'base64'))).toBe(true);
    for (const bad of ['***', 'AAA', 'QUJD RA==', '-_-_']) {
      const res = await api('POST', SIGN, { key: aSign, body: body(bad) });
      expect(res.status, bad).toBe(400);
    }
  });

  it('the audit entry names purpose, key and the message digest (never the message), and its id is audit_id', async () => {
    const k = created.ED25519!;
    const message = Buffer.from(canary('sign-message'));
    const purpose = `release v${randomBytes(2).toString('hex')}`;
    const out = await signOk(aSign, k.id, message, purpose);
    const entry = await auditItem(a.tenantId, out.audit_id);
    expect(entry).toMatchObject({
      id: out.audit_id,
      tenant_id: a.tenantId,
      action: 'crypto.sign',
      outcome: 'success',
      resource: { type: 'code_signing_key', id: k.id },
      detail: {
        purpose,
        backend: 'pkcs11',
        algorithm: 'ED25519',
        message_sha256: createHash('sha256').update(message).digest('hex'),
        message_bytes: message.length,
      },
    });
    const text = JSON.stringify(entry);
    expect(text).not.toContain(message.toString('base64'));
    expect(text).not.toContain(message.toString());
    expect(text).not.toContain(out.signature);
    // another account's entry of the same id does not exist
    expect(await auditItem(b.tenantId, out.audit_id)).toBeUndefined();
  });

  it("another account's key, an unknown key, a software key and the wrong backend → 404 with the same body", async () => {
    const msg = Buffer.from('x').toString('base64');
    const foreign = await api('POST', SIGN, { key: bSign, body: { backend: 'pkcs11', key_id: created.EC_P256!.id, message: msg, purpose: 'steal' } });
    const unknown = await api('POST', SIGN, {
      key: bSign,
      body: { backend: 'pkcs11', key_id: '01900000-0000-7000-8000-000000000001', message: msg, purpose: 'x' },
    });
    expect(foreign.status).toBe(404);
    expect(unknown.status).toBe(404);
    const strip = (x: any) => ({ ...x, request_id: undefined });
    expect(strip(foreign.body)).toEqual(strip(unknown.body));
    expect(foreign.text).not.toContain(created.EC_P256!.id);

    const wrongBackend = await api('POST', SIGN, { key: aSign, body: { backend: 'kms', key_id: created.EC_P256!.id, message: msg, purpose: 'x' } });
    expect(wrongBackend.status).toBe(404);

    const software = await api('POST', '/api/v1/code-signing-keys', {
      key: aCreate,
      body: { name: 'sw-key', backend: 'software', generate: 'ecdsa-p256' },
    });
    expect(software.status).toBe(201);
    const sw = await api('POST', SIGN, {
      key: aSign,
      body: { backend: 'pkcs11', key_id: software.body.data.code_signing_key.id, message: msg, purpose: 'x' },
    });
    expect(sw.status).toBe(404);
  });

  it('400 on unknown fields, wrong types, missing or bad values', async () => {
    const good = { backend: 'pkcs11', key_id: created.EC_P256!.id, message: 'AQID', purpose: 'p' };
    const bad: Array<Record<string, unknown>> = [
      { ...good, extra: 1 },
      { ...good, message: 3 },
      { ...good, key_id: 'not-a-uuid' },
      { ...good, backend: 'tpm' },
      { ...good, purpose: '' },
      { ...good, purpose: 'x'.repeat(257) },
      { backend: 'pkcs11', key_id: good.key_id, message: 'AQID' },
      {},
    ];
    for (const body of bad) {
      const res = await api('POST', SIGN, { key: aSign, body });
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(errorCode(res)).toBe('validation_failed');
    }
  });
});

describe('key creation', () => {
  it('400 on unknown spec, a signing algorithm the key cannot use, and unknown fields', async () => {
    for (const body of [
      { algorithm: 'RSA_1024' },
      { algorithm: 'EC_P256', signing_algorithm: 'RSA_PSS_SHA256' },
      { algorithm: 'EC_P256', private_key: 'x' },
      {},
    ]) {
      const res = await createKey(aCreate, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
  });

  it('a kms key cannot be created locally: 503 naming why', async () => {
    const res = await createKey(aCreate, { backend: 'kms', algorithm: 'EC_P256' });
    expect(res.status).toBe(503);
    expect(res.body.error).toMatch(/kms/i);
  });
});

describe('GET /api/v1/crypto/signing-keys', () => {
  it("lists the caller's account-owned handles only, without internal handles; paging; 400 on bad query", async () => {
    const own = await api('GET', '/api/v1/crypto/signing-keys?backend=pkcs11', { key: aSign });
    expect(own.status).toBe(200);
    const ids = own.body.data.signing_keys.map((k: any) => k.key_id).sort();
    expect(ids).toEqual(
      Object.values(created)
        .map((k) => k.id)
        .sort(),
    );
    expect(own.body.data.signing_keys[0]).toMatchObject({ backend: 'pkcs11', public_key: expect.stringMatching(/BEGIN PUBLIC KEY/) });
    expect(own.text).not.toContain('key_handle');

    const other = await api('GET', '/api/v1/crypto/signing-keys?backend=pkcs11', { key: bSign });
    expect(other.status).toBe(200);
    expect(other.body.data.signing_keys).toEqual([]);

    const kms = await api('GET', '/api/v1/crypto/signing-keys?backend=kms', { key: aSign });
    expect(kms.body.data.signing_keys).toEqual([]);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await api('GET', `/api/v1/crypto/signing-keys?backend=pkcs11&limit=4${cursor ? `&cursor=${cursor}` : ''}`, { key: aSign });
      expect(page.status).toBe(200);
      seen.push(...page.body.data.signing_keys.map((k: any) => k.key_id));
      cursor = page.body.data.next_cursor;
    } while (cursor);
    expect(seen.sort()).toEqual(ids);

    for (const q of ['backend=tpm', 'limit=0', 'limit=x', 'foo=1', 'cursor=bogus']) {
      const res = await api('GET', `/api/v1/crypto/signing-keys?${q}`, { key: aSign });
      expect(res.status, q).toBe(400);
    }
  });
});
