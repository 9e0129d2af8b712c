import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IdentityProvider, ServiceProvider } from 'samlify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, errorCode, newAccount, type TestAccount } from '../helpers/api.js';
import { useRuntimeConfig } from '../helpers/in-process.js';

/**
 * The SAML stores. Metadata comes from a real IdP library (samlify, identity-provider role)
 * and must come back byte for byte; assertions are signed by an implementation this service
 * does not use (Debian's xmlsec1) and must verify, while tampered, wrapped (XSW), unsigned,
 * XXE and entity-expansion inputs are refused; check-replay is exactly-once under concurrency.
 */
let acct: TestAccount;
let other: TestAccount;
let readKey: string;
let writeKey: string;
let wrongKey: string;
let dir: string;
let certPem: string;
let idpXml: string;
let metadataId: string;
const ENTITY = `https://idp-${randomBytes(4).toString('hex')}.example.test/metadata`;
const NS_A = 'urn:oasis:names:tc:SAML:2.0:assertion';
const NS_P = 'urn:oasis:names:tc:SAML:2.0:protocol';

function keyPair(name: string): { key: string; cert: string } {
  const key = join(dir, `${name}.key.pem`);
  const cert = join(dir, `${name}.cert.pem`);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '30', '-subj', `/CN=${name}`], {
    stdio: 'ignore',
  });
  return { key, cert };
}

const iso = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** An assertion template with an empty enveloped signature for xmlsec1 to fill in. */
function template(id: string, opts: { issuer?: string; subject?: string; notOnOrAfter?: string } = {}): string {
  return `<saml:Assertion xmlns:saml="${NS_A}" ID="${id}" Version="2.0" IssueInstant="${iso(0)}"><saml:Issuer>${opts.issuer ?? ENTITY}</saml:Issuer><ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:SignedInfo><ds:CanonicalizationMethod Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/><ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"/><ds:Reference URI="#${id}"><ds:Transforms><ds:Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"/><ds:Transform Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/></ds:Transforms><ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/><ds:DigestValue/></ds:Reference></ds:SignedInfo><ds:SignatureValue/><ds:KeyInfo><ds:X509Data/></ds:KeyInfo></ds:Signature><saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress">${opts.subject ?? 'alice@example.test'}</saml:NameID><saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotOnOrAfter="${iso(300_000)}" Recipient="https://sp.example.test/acs"/></saml:SubjectConfirmation></saml:Subject><saml:Conditions NotBefore="${iso(-60_000)}" NotOnOrAfter="${opts.notOnOrAfter ?? iso(600_000)}"><saml:AudienceRestriction><saml:Audience>https://sp.example.test</saml:Audience></saml:AudienceRestriction></saml:Conditions><saml:AuthnStatement AuthnInstant="${iso(0)}" SessionIndex="_s1"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:Password</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement></saml:Assertion>`;
}

/** Signs with xmlsec1 (libxmlsec1 + OpenSSL), the assertion's ID attribute declared. */
function xmlsecSign(xml: string, pair: { key: string; cert: string }): string {
  const input = join(dir, `in-${randomBytes(4).toString('hex')}.xml`);
  const output = `${input}.signed`;
  writeFileSync(input, xml);
  execFileSync('xmlsec1', ['--sign', '--privkey-pem', `${pair.key},${pair.cert}`, '--id-attr:ID', `${NS_A}:Assertion`, '--output', output, input], { stdio: 'pipe' });
  return readFileSync(output, 'utf8');
}

const newId = () => `_${randomBytes(12).toString('hex')}`;
const response = (inner: string) =>
  `<samlp:Response xmlns:samlp="${NS_P}" xmlns:saml="${NS_A}" ID="${newId()}" Version="2.0" IssueInstant="${iso(0)}"><saml:Issuer>${ENTITY}</saml:Issuer><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>${inner}</samlp:Response>`;
const body = (xml: string) => ({ assertion: xml });
const stripDecl = (xml: string) => xml.replace(/^<\?xml[^>]*\?>\s*/, '');
let idp: { key: string; cert: string };

beforeAll(async () => {
  useRuntimeConfig();
  [acct, other] = await Promise.all([newAccount('saml'), newAccount('saml-other')]);
  [readKey, writeKey, wrongKey] = await Promise.all([acct.key(['saml:read']), acct.key(['saml:read', 'saml:write']), acct.key(['oidc:read', 'oidc:write'])]);
  dir = mkdtempSync(join(tmpdir(), 'saml-'));
  idp = keyPair('idp');
  certPem = readFileSync(idp.cert, 'utf8');
  idpXml = IdentityProvider({
    entityID: ENTITY,
    signingCert: certPem,
    wantAuthnRequestsSigned: false,
    singleSignOnService: [
      { Binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect', Location: 'https://idp.example.test/sso/redirect' },
      { Binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST', Location: 'https://idp.example.test/sso/post' },
    ],
    singleLogoutService: [{ Binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect', Location: 'https://idp.example.test/slo' }],
  }).getMetadata();
  const made = await api('POST', '/api/v1/saml/metadata', { key: writeKey, body: { xml: idpXml, description: 'samlify IdP' } });
  if (made.status !== 201) throw new Error(`metadata: ${made.status} ${made.text}`);
  metadataId = made.body.data.metadata.id;
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('SAML metadata', () => {
  it('metadata from samlify round-trips through /xml byte for byte; parsed fields; list; update; delete', async () => {
    const xml = await api('GET', `/api/v1/saml/metadata/${metadataId}/xml`, { key: readKey });
    expect(xml.status).toBe(200);
    expect(xml.headers.get('content-type')).toBe('application/samlmetadata+xml');
    expect(xml.text).toBe(idpXml);

    const got = await api('GET', `/api/v1/saml/metadata/${metadataId}`, { key: readKey });
    expect(got.status).toBe(200);
    const m = got.body.data.metadata;
    expect(m).toMatchObject({ entity_id: ENTITY, roles: ['idp'], description: 'samlify IdP', version: 1 });
    expect(m.endpoints).toEqual(
      expect.arrayContaining([
        { role: 'idp', kind: 'SingleSignOnService', binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST', location: 'https://idp.example.test/sso/post' },
        { role: 'idp', kind: 'SingleLogoutService', binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect', location: 'https://idp.example.test/slo' },
      ]),
    );
    expect(m.certificates).toHaveLength(1);
    expect(m.certificates[0]).toMatchObject({ use: 'signing', subject: 'CN=idp' });
    const days = (Date.parse(m.certificates[0].not_after) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29);
    expect(days).toBeLessThan(31);
    expect(m.certificates_expire_at).toBe(m.certificates[0].not_after);

    const list = await api('GET', '/api/v1/saml/metadata', { key: readKey });
    expect(list.status).toBe(200);
    expect(list.body.data.metadata.map((x: { id: string }) => x.id)).toContain(metadataId);

    // an SP's metadata: created, updated to another entity, deleted
    const sp = ServiceProvider({
      entityID: 'https://sp.example.test/metadata',
      assertionConsumerService: [{ Binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST', Location: 'https://sp.example.test/acs' }],
    }).getMetadata();
    const made = await api('POST', '/api/v1/saml/metadata', { key: writeKey, body: { xml: Buffer.from(sp).toString('base64') } });
    expect(made.status, made.text).toBe(201);
    expect(made.body.data.metadata).toMatchObject({ entity_id: 'https://sp.example.test/metadata', roles: ['sp'] });
    expect((await api('GET', `/api/v1/saml/metadata/${made.body.data.metadata.id}/xml`, { key: readKey })).text).toBe(sp);
    const dup = await api('POST', '/api/v1/saml/metadata', { key: writeKey, body: { xml: sp } });
    expect(dup.status).toBe(409);
    expect(errorCode(dup)).toBe('already_exists');
    const sp2 = sp.replace('https://sp.example.test/metadata', 'https://sp2.example.test/metadata');
    const upd = await api('PUT', `/api/v1/saml/metadata/${made.body.data.metadata.id}`, { key: writeKey, body: { xml: sp2, description: 'moved' } });
    expect(upd.status, upd.text).toBe(200);
    expect(upd.body.data.metadata).toMatchObject({ entity_id: 'https://sp2.example.test/metadata', description: 'moved', version: 2 });
    // the old entityID is free again
    const again = await api('POST', '/api/v1/saml/metadata', { key: writeKey, body: { xml: sp } });
    expect(again.status).toBe(201);
    for (const id of [made.body.data.metadata.id, again.body.data.metadata.id]) {
      expect((await api('DELETE', `/api/v1/saml/metadata/${id}`, { key: writeKey })).status).toBe(200);
      expect((await api('GET', `/api/v1/saml/metadata/${id}`, { key: readKey })).status).toBe(404);
    }
  });

  it('400 for malformed XML, DTDs, a root that is not an EntityDescriptor, no entityID or role, a bad certificate', async () => {
    const cases: [string, string][] = [
      ['<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="x"><unclosed></md:EntityDescriptor>', 'invalid_xml'],
      [`<?xml version="1.0"?><!DOCTYPE md [<!ENTITY e SYSTEM "file:///etc/passwd">]>${idpXml.replace(/^<\?xml[^>]*\?>/, '')}`, 'invalid_xml'],
      ['<foo/>', 'invalid_xml'],
      ['<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata"><md:IDPSSODescriptor/></md:EntityDescriptor>', 'invalid_xml'],
      ['<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="e"/>', 'invalid_xml'],
      [idpXml.replace(/<ds:X509Certificate>[^<]+/, '<ds:X509Certificate>AAAA'), 'invalid_xml'],
      ['not xml at all!', 'invalid_xml'],
    ];
    for (const [xml, code] of cases) {
      const res = await api('POST', '/api/v1/saml/metadata', { key: writeKey, body: { xml } });
      expect(res.status, xml.slice(0, 60)).toBe(400);
      expect(errorCode(res)).toBe(code);
    }
    expect(errorCode(await api('POST', '/api/v1/saml/metadata', { key: writeKey, body: {} }))).toBe('validation_failed');
    expect(errorCode(await api('PUT', `/api/v1/saml/metadata/${metadataId}`, { key: writeKey, body: {} }))).toBe('validation_failed');
  });

  it('401, 403 without the scope, 404 for another account on every metadata route', async () => {
    expect((await api('GET', '/api/v1/saml/metadata')).status).toBe(401);
    expect(errorCode(await api('GET', `/api/v1/saml/metadata/${metadataId}/xml`, { key: wrongKey }))).toBe('insufficient_scope');
    expect(errorCode(await api('POST', '/api/v1/saml/metadata', { key: readKey, body: { xml: idpXml } }))).toBe('insufficient_scope');
    for (const [m, path, b] of [
      ['GET', '', undefined],
      ['GET', '/xml', undefined],
      ['PUT', '', { description: 'theirs' }],
      ['DELETE', '', undefined],
    ] as const) {
      expect((await api(m, `/api/v1/saml/metadata/${metadataId}${path}`, { key: other.adminKey, body: b })).status, `${m} ${path}`).toBe(404);
    }
  });
});

describe('SAML certificate expiry', () => {
  it('saml_metadata.certificate_expiring once per certificate and threshold (30, 7, 1 days)', async () => {
    const { emitExpiringSamlCertificates } = await import('../../lib/federation/saml.js');
    const acctExp = await newAccount('saml-exp');
    const made = await api('POST', '/api/v1/saml/metadata', { key: acctExp.adminKey, body: { xml: idpXml } });
    expect(made.status).toBe(201);
    const notAfter = Date.parse(made.body.data.metadata.certificates[0].not_after);
    const at = (days: number) => ({ now: new Date(notAfter - days * 86_400_000) });
    expect(await emitExpiringSamlCertificates(acctExp.tenantId, at(40))).toEqual({ emitted: 0, checked: 1 });
    expect(await emitExpiringSamlCertificates(acctExp.tenantId, at(20))).toEqual({ emitted: 1, checked: 1 });
    expect(await emitExpiringSamlCertificates(acctExp.tenantId, at(19))).toEqual({ emitted: 0, checked: 1 });
    expect(await emitExpiringSamlCertificates(acctExp.tenantId, at(5))).toEqual({ emitted: 1, checked: 1 });
    expect(await emitExpiringSamlCertificates(acctExp.tenantId, at(0.5))).toEqual({ emitted: 1, checked: 1 });
    expect(await emitExpiringSamlCertificates(acctExp.tenantId, at(-1))).toEqual({ emitted: 0, checked: 1 });
  });
});

describe('SAML assertions', () => {
  it('an assertion signed by xmlsec1 verifies (alone, in a Response, base64); fields come from the signed XML', async () => {
    const id = newId();
    const signed = xmlsecSign(template(id), idp);
    expect(signed).toContain('<ds:SignatureValue>');
    const res = await api('POST', '/api/v1/saml/assertions', { key: writeKey, body: body(signed) });
    expect(res.status, res.text).toBe(201);
    const a = res.body.data.assertion;
    expect(a).toMatchObject({
      assertion_id: id,
      issuer: ENTITY,
      metadata_id: metadataId,
      subject: 'alice@example.test',
      subject_format: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
      audiences: ['https://sp.example.test'],
      recipient: 'https://sp.example.test/acs',
      session_index: '_s1',
      signature_algorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    });
    expect(Date.parse(a.not_on_or_after)).toBeGreaterThan(Date.now());

    const wrapped = await api('POST', '/api/v1/saml/assertions', { key: writeKey, body: body(response(stripDecl(xmlsecSign(template(newId()), idp)))) });
    expect(wrapped.status, wrapped.text).toBe(201);
    const b64 = await api('POST', '/api/v1/saml/assertions', { key: writeKey, body: body(Buffer.from(xmlsecSign(template(newId()), idp)).toString('base64')) });
    expect(b64.status, b64.text).toBe(201);

    const got = await api('GET', `/api/v1/saml/assertions/${a.id}`, { key: readKey });
    expect(got.status).toBe(200);
    expect(got.body.data.assertion).toEqual(a);
    const list = await api('GET', '/api/v1/saml/assertions', { key: readKey });
    expect(list.body.data.assertions.map((x: { id: string }) => x.id)).toContain(a.id);
    expect((await api('DELETE', `/api/v1/saml/assertions/${a.id}`, { key: writeKey })).status).toBe(200);
    expect((await api('GET', `/api/v1/saml/assertions/${a.id}`, { key: readKey })).status).toBe(404);
  });

  it('refuses tampered, unsigned, wrongly signed and signature-wrapped (XSW) assertions', async () => {
    const id = newId();
    const signed = stripDecl(xmlsecSign(template(id), idp)).trim();
    const refuse = async (xml: string, code: string, what: string) => {
      const res = await api('POST', '/api/v1/saml/assertions', { key: writeKey, body: body(xml) });
      expect(res.status, `${what}: ${res.text}`).toBe(400);
      expect(errorCode(res), what).toBe(code);
    };
    await refuse(signed.replace('alice@example.test', 'admin@example.test'), 'saml_signature_invalid', 'tampered subject');
    await refuse(signed.replace(/NotOnOrAfter="([^"]+)"><saml:AudienceRestriction>/, `NotOnOrAfter="${iso(86_400_000)}"><saml:AudienceRestriction>`), 'saml_signature_invalid', 'tampered conditions');
    await refuse(signed.replace(/<ds:Signature[\s\S]*<\/ds:Signature>/, ''), 'saml_signature_invalid', 'unsigned');
    await refuse(stripDecl(xmlsecSign(template(newId()), keyPair('rogue'))), 'saml_signature_invalid', 'signed by another key');

    const evil = template(newId(), { subject: 'admin@example.test' }).replace(/<ds:Signature[\s\S]*<\/ds:Signature>/, '');
    // XSW 1: an evil assertion beside the signed one in a Response
    await refuse(response(evil + signed), 'saml_signature_invalid', 'XSW evil first');
    await refuse(response(signed + evil), 'saml_signature_invalid', 'XSW evil last');
    // XSW 2: the signed assertion hidden in the evil one's Advice, the evil one carrying its ID
    const sameId = evil.replace(/ID="[^"]+"/, `ID="${id}"`);
    await refuse(sameId.replace('<saml:Subject>', `<saml:Advice>${signed}</saml:Advice><saml:Subject>`), 'saml_signature_invalid', 'XSW advice');
    // XSW 3: the evil assertion carries the original signature; the signed content sits in an
    // extension element with the original ID, so the reference resolves and its digest matches
    const sig = /<ds:Signature[\s\S]*<\/ds:Signature>/.exec(signed)![0];
    const hidden = signed.replace(/^<saml:Assertion /, '<ext:Original xmlns:ext="urn:example:ext" ').replace(/<\/saml:Assertion>$/, '</ext:Original>');
    await refuse(
      response(evil.replace('</saml:Issuer>', `</saml:Issuer>${sig}`).replace('<saml:Subject>', `<saml:Subject><saml:SubjectConfirmation Method="urn:x"><saml:SubjectConfirmationData>${hidden}</saml:SubjectConfirmationData></saml:SubjectConfirmation>`)),
      'saml_signature_invalid',
      'XSW reference to another element',
    );
    // XSW 4: two elements with the signed ID
    await refuse(response(`<samlp:Extensions><x:Wrap xmlns:x="urn:x" ID="${id}"/></samlp:Extensions>${signed}`), 'saml_signature_invalid', 'XSW duplicate ID');
  });

  it('refuses external entities, entity expansion, expired and unknown-issuer assertions (400)', async () => {
    const signed = stripDecl(xmlsecSign(template(newId()), idp));
    const xxe = `<?xml version="1.0"?><!DOCTYPE saml:Assertion [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>${signed.replace('alice@example.test', '&xxe;')}`;
    const res = await api('POST', '/api/v1/saml/assertions', { key: writeKey, body: body(xxe) });
    expect(res.status).toBe(400);
    expect(errorCode(res)).toBe('invalid_xml');
    expect(res.text).not.toContain('root:');
    const lol = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>${signed.replace('alice@example.test', '&lol3;')}`;
    expect(errorCode(await api('POST', '/api/v1/saml/assertions', { key: writeKey, body: body(lol) }))).toBe('invalid_xml');
    const expired = await api('POST', '/api/v1/saml/assertions', { key: writeKey, body: body(xmlsecSign(template(newId(), { notOnOrAfter: iso(-300_000) }), idp)) });
    expect(errorCode(expired)).toBe('assertion_expired');
    const unknown = await api('POST', '/api/v1/saml/assertions', { key: writeKey, body: body(xmlsecSign(template(newId(), { issuer: 'https://nobody.example.test' }), idp)) });
    expect(errorCode(unknown)).toBe('unknown_issuer');
    // another account has no metadata for this issuer
    expect(errorCode(await api('POST', '/api/v1/saml/assertions', { key: other.adminKey, body: body(signed) }))).toBe('unknown_issuer');
    expect(errorCode(await api('POST', '/api/v1/saml/assertions', { key: writeKey, body: {} }))).toBe('validation_failed');
    expect(errorCode(await api('POST', '/api/v1/saml/assertions', { key: writeKey, body: body('<saml:Assertion') }))).toBe('invalid_xml');
  });

  it('401, 403 without the scope, 404 for another account', async () => {
    const a = (await api('POST', '/api/v1/saml/assertions', { key: writeKey, body: body(xmlsecSign(template(newId()), idp)) })).body.data.assertion;
    expect((await api('GET', '/api/v1/saml/assertions')).status).toBe(401);
    expect(errorCode(await api('POST', '/api/v1/saml/assertions', { key: readKey, body: body('<x/>') }))).toBe('insufficient_scope');
    expect(errorCode(await api('GET', `/api/v1/saml/assertions/${a.id}`, { key: wrongKey }))).toBe('insufficient_scope');
    expect((await api('GET', `/api/v1/saml/assertions/${a.id}`, { key: other.adminKey })).status).toBe(404);
    expect((await api('DELETE', `/api/v1/saml/assertions/${a.id}`, { key: other.adminKey })).status).toBe(404);
    expect((await api('GET', '/api/v1/saml/assertions/nope', { key: readKey })).status).toBe(400);
  });
});

describe('check-replay', () => {
  it('20 concurrent checks of one assertion: exactly one fresh, 19 replayed; per account', async () => {
    const claim = { assertion_id: newId(), issuer: ENTITY, not_on_or_after: iso(600_000) };
    const results = await Promise.all(Array.from({ length: 20 }, () => api('POST', '/api/v1/saml/assertions/check-replay', { key: writeKey, body: claim })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    expect(results.find((r) => r.status === 200)!.body.data).toMatchObject({ fresh: true });
    expect(results.filter((r) => r.status === 409).map(errorCode)).toEqual(Array(19).fill('assertion_replayed'));
    // another account keeps its own replay cache
    expect((await api('POST', '/api/v1/saml/assertions/check-replay', { key: other.adminKey, body: claim })).status).toBe(200);
    // another issuer with the same id is another assertion
    expect((await api('POST', '/api/v1/saml/assertions/check-replay', { key: writeKey, body: { ...claim, issuer: 'https://other.example.test' } })).status).toBe(200);
  });

  it('400 for expired or malformed claims; 401; 403 without saml:write', async () => {
    const past = await api('POST', '/api/v1/saml/assertions/check-replay', { key: writeKey, body: { assertion_id: 'a', issuer: 'i', not_on_or_after: iso(-600_000) } });
    expect(errorCode(past)).toBe('assertion_expired');
    for (const b of [{}, { assertion_id: 'a', issuer: 'i', not_on_or_after: 'tomorrow' }, { assertion_id: '', issuer: 'i', not_on_or_after: iso(1000) }]) {
      expect(errorCode(await api('POST', '/api/v1/saml/assertions/check-replay', { key: writeKey, body: b }))).toBe('validation_failed');
    }
    expect((await api('POST', '/api/v1/saml/assertions/check-replay', { body: {} })).status).toBe(401);
    expect(errorCode(await api('POST', '/api/v1/saml/assertions/check-replay', { key: readKey, body: {} }))).toBe('insufficient_scope');
  });
});
