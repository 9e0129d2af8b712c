import { createHash, X509Certificate } from 'node:crypto';
import { DOMParser, type Document, type Element } from '@xmldom/xmldom';
import { SignedXml } from 'xml-crypto';
import { badRequest } from '../core/errors.js';
import { MAX_XML_BYTES } from './saml-schemas.js';

/**
 * SAML XML, read defensively (docs/api.md, "Federation"):
 * - the input is XML text or base64 of it, at most MAX_XML_BYTES;
 * - any DTD (`<!DOCTYPE`) or entity declaration is refused before parsing: no external
 *   entity (XXE) and no entity expansion ("billion laughs") can happen; a parse error,
 *   even a recoverable one, refuses the document;
 * - an assertion is accepted only when exactly one `saml:Assertion` is in the document (as
 *   the root or a direct child of a `samlp:Response`), carrying exactly one enveloped
 *   `ds:Signature` whose one Reference names that assertion's ID, and the ID is unique in the
 *   document; the signature must verify (xml-crypto, HMAC disabled) with a signing
 *   certificate of the issuer's stored metadata, and every field is then read from the XML
 *   the signature covers (xml-crypto's signed reference), never from the document around it —
 *   so a wrapped (XSW) or tampered document is refused.
 */
const NS = {
  md: 'urn:oasis:names:tc:SAML:2.0:metadata',
  saml: 'urn:oasis:names:tc:SAML:2.0:assertion',
  samlp: 'urn:oasis:names:tc:SAML:2.0:protocol',
  ds: 'http://www.w3.org/2000/09/xmldsig#',
} as const;

const invalidXml = (message: string, path = 'body') => badRequest(message, [{ path, message }], 'invalid_xml');
const badSignature = (message: string) =>
  badRequest(`the assertion is refused: ${message}`, [{ path: 'body.assertion', message }], 'saml_signature_invalid');

/** The XML text of a field given as XML or as base64 of XML. */
export function xmlText(input: string, path: string): string {
  const trimmed = input.trim();
  let text = trimmed;
  if (!trimmed.startsWith('<')) {
    if (!/^[A-Za-z0-9+/=\s]+$/.test(trimmed)) throw invalidXml('neither XML nor base64 of XML', path);
    text = Buffer.from(trimmed.replace(/\s+/g, ''), 'base64').toString('utf8');
    if (!text.trimStart().startsWith('<')) throw invalidXml('the base64 does not decode to XML', path);
  } else text = input;
  if (Buffer.byteLength(text, 'utf8') > MAX_XML_BYTES) throw invalidXml(`the XML exceeds ${MAX_XML_BYTES} bytes`, path);
  return text;
}

/** Parses XML with no DTD at all; any parser error or warning about structure refuses it. */
function parseXml(text: string, path: string): Document {
  if (/<!DOCTYPE/i.test(text) || /<!ENTITY/i.test(text)) throw invalidXml('DTDs and entity declarations are not accepted', path);
  let problem: string | undefined;
  let doc: Document;
  try {
    doc = new DOMParser({
      onError: (level, message) => {
        if (level !== 'warning') {
          problem ??= message;
          throw new Error(message);
        }
      },
    }).parseFromString(text, 'text/xml');
  } catch (error) {
    throw invalidXml(`malformed XML: ${(problem ?? (error as Error).message).split('\n')[0]!.slice(0, 160)}`, path);
  }
  if (!doc.documentElement) throw invalidXml('no root element', path);
  return doc;
}

const children = (el: Element, ns: string, local: string): Element[] =>
  Array.from(el.childNodes).filter((n): n is Element => n.nodeType === 1 && (n as Element).namespaceURI === ns && (n as Element).localName === local);
const child = (el: Element, ns: string, local: string): Element | undefined => children(el, ns, local)[0];
const text = (el: Element | undefined): string | null => (el?.textContent ?? '').trim() || null;
const attr = (el: Element | undefined, name: string): string | null => el?.getAttribute(name) || null;

export interface CertInfo {
  readonly use: 'signing' | 'encryption' | 'both';
  readonly pem: string;
  readonly fingerprint_sha256: string;
  readonly subject: string;
  readonly not_before: string;
  readonly not_after: string;
}

function certOf(b64: string, use: CertInfo['use'], path: string): CertInfo {
  const der = Buffer.from(b64.replace(/\s+/g, ''), 'base64');
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(der);
  } catch {
    throw invalidXml('an X509Certificate does not parse', path);
  }
  const pem = `-----BEGIN CERTIFICATE-----\n${der.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`;
  return {
    use,
    pem,
    fingerprint_sha256: createHash('sha256').update(der).digest('hex'),
    subject: cert.subject.replace(/\n/g, ', '),
    not_before: new Date(cert.validFrom).toISOString(),
    not_after: new Date(cert.validTo).toISOString(),
  };
}

interface ParsedMetadata {
  readonly entity_id: string;
  readonly roles: string[];
  readonly endpoints: { role: string; kind: string; binding: string; location: string }[];
  readonly certificates: CertInfo[];
  readonly signed: boolean;
  readonly valid_until: string | null;
}

const ROLES: Record<string, string> = {
  IDPSSODescriptor: 'idp',
  SPSSODescriptor: 'sp',
  AttributeAuthorityDescriptor: 'attribute_authority',
  AuthnAuthorityDescriptor: 'authn_authority',
  PDPDescriptor: 'pdp',
};
const ENDPOINTS = [
  'SingleSignOnService',
  'SingleLogoutService',
  'AssertionConsumerService',
  'ArtifactResolutionService',
  'AttributeService',
  'ManageNameIDService',
];

/** One md:EntityDescriptor: its entityID, roles, endpoints and certificates (with their validity). */
export function parseMetadata(xml: string): ParsedMetadata {
  const path = 'body.xml';
  const root = parseXml(xml, path).documentElement!;
  if (root.namespaceURI !== NS.md || root.localName !== 'EntityDescriptor') throw invalidXml('the root must be one md:EntityDescriptor', path);
  const entityId = attr(root, 'entityID');
  if (!entityId || entityId.length > 1024) throw invalidXml('the EntityDescriptor has no entityID (or one over 1024 characters)', path);
  const roles: string[] = [];
  const endpoints: ParsedMetadata['endpoints'] = [];
  const certificates: CertInfo[] = [];
  for (const [local, role] of Object.entries(ROLES)) {
    for (const desc of children(root, NS.md, local)) {
      roles.push(role);
      for (const kind of ENDPOINTS) {
        for (const ep of children(desc, NS.md, kind)) {
          const binding = attr(ep, 'Binding');
          const location = attr(ep, 'Location');
          if (!binding || !location) throw invalidXml(`a ${kind} lacks Binding or Location`, path);
          endpoints.push({ role, kind, binding, location });
        }
      }
      for (const kd of children(desc, NS.md, 'KeyDescriptor')) {
        const use = (attr(kd, 'use') ?? 'both') as CertInfo['use'];
        if (!['signing', 'encryption', 'both'].includes(use)) throw invalidXml('KeyDescriptor use must be signing or encryption', path);
        const x509 = child(kd, NS.ds, 'KeyInfo');
        const data = x509 ? child(x509, NS.ds, 'X509Data') : undefined;
        for (const c of data ? children(data, NS.ds, 'X509Certificate') : []) certificates.push(certOf(text(c) ?? '', use, path));
      }
    }
  }
  if (roles.length === 0) throw invalidXml('the EntityDescriptor has no role descriptor (IDPSSODescriptor, SPSSODescriptor, ...)', path);
  return {
    entity_id: entityId,
    roles,
    endpoints,
    certificates,
    signed: child(root, NS.ds, 'Signature') !== undefined,
    valid_until: attr(root, 'validUntil'),
  };
}

interface VerifiedAssertion {
  readonly assertion_id: string;
  readonly issuer: string;
  readonly subject: string | null;
  readonly subject_format: string | null;
  readonly issue_instant: string | null;
  readonly not_before: string | null;
  readonly not_on_or_after: string | null;
  readonly subject_not_on_or_after: string | null;
  readonly recipient: string | null;
  readonly audiences: string[];
  readonly authn_instant: string | null;
  readonly session_index: string | null;
  readonly signature_algorithm: string;
  readonly certificate_sha256: string;
}

/** The unsigned issuer and the single assertion of a document, after the structural XSW checks. */
export function locateAssertion(xml: string): { doc: Document; assertion: Element; issuer: string; signature: Element } {
  const path = 'body.assertion';
  const doc = parseXml(xml, path);
  const root = doc.documentElement!;
  if (doc.getElementsByTagNameNS(NS.saml, 'EncryptedAssertion').length > 0) throw invalidXml('encrypted assertions are not supported', path);
  const all = Array.from(doc.getElementsByTagNameNS(NS.saml, 'Assertion'));
  if (all.length !== 1) throw badSignature(`exactly one Assertion is accepted, the document has ${all.length}`);
  const assertion = all[0]!;
  const isRoot = assertion === root;
  const inResponse = root.namespaceURI === NS.samlp && root.localName === 'Response' && assertion.parentNode === root;
  if (!isRoot && !inResponse) throw badSignature('the Assertion must be the root or a direct child of a samlp:Response');
  const id = attr(assertion, 'ID');
  if (!id) throw badSignature('the Assertion has no ID');
  const sameId = Array.from(doc.getElementsByTagName('*')).filter((e) =>
    Array.from(e.attributes).some((a) => ['ID', 'Id', 'id'].includes(a.localName ?? a.name) && a.value === id),
  );
  if (sameId.length !== 1) throw badSignature('the Assertion ID is not unique in the document');
  const signatures = children(assertion, NS.ds, 'Signature');
  if (signatures.length !== 1) throw badSignature(signatures.length === 0 ? 'the Assertion is not signed' : 'the Assertion has several signatures');
  const issuer = text(child(assertion, NS.saml, 'Issuer'));
  if (!issuer) throw badSignature('the Assertion has no Issuer');
  return { doc, assertion, issuer, signature: signatures[0]! };
}

/**
 * Verifies the located assertion's signature with one of `certs` and reads the assertion
 * from the signed XML only. Throws a 400 when no certificate verifies it.
 */
export function verifyAssertion(xml: string, located: ReturnType<typeof locateAssertion>, certs: readonly CertInfo[]): VerifiedAssertion {
  const id = attr(located.assertion, 'ID')!;
  for (const cert of certs) {
    const sig = new SignedXml({ publicCert: cert.pem, getCertFromKeyInfo: () => null });
    let signed: string[];
    try {
      sig.loadSignature(located.signature as unknown as Parameters<SignedXml['loadSignature']>[0]);
      const refs = sig.getReferences();
      if (refs.length !== 1 || refs[0]!.uri !== `#${id}`) throw badSignature('the signature must have exactly one Reference, to the Assertion');
      if (!sig.checkSignature(xml)) continue;
      signed = sig.getSignedReferences();
    } catch (error) {
      if ((error as { status?: number }).status === 400) throw error;
      continue;
    }
    if (signed.length !== 1) continue;
    const a = parseXml(signed[0]!, 'body.assertion').documentElement!;
    if (a.namespaceURI !== NS.saml || a.localName !== 'Assertion' || attr(a, 'ID') !== id)
      throw badSignature('the signed element is not the Assertion');
    const subject = child(a, NS.saml, 'Subject');
    const nameId = subject ? child(subject, NS.saml, 'NameID') : undefined;
    const confirmation = subject ? child(subject, NS.saml, 'SubjectConfirmation') : undefined;
    const confData = confirmation ? child(confirmation, NS.saml, 'SubjectConfirmationData') : undefined;
    const conditions = child(a, NS.saml, 'Conditions');
    const authn = child(a, NS.saml, 'AuthnStatement');
    const audiences = (conditions ? children(conditions, NS.saml, 'AudienceRestriction') : []).flatMap((r) =>
      children(r, NS.saml, 'Audience')
        .map(text)
        .filter((t): t is string => t !== null),
    );
    return {
      assertion_id: id,
      issuer: text(child(a, NS.saml, 'Issuer')) ?? '',
      subject: text(nameId),
      subject_format: attr(nameId, 'Format'),
      issue_instant: attr(a, 'IssueInstant'),
      not_before: attr(conditions, 'NotBefore'),
      not_on_or_after: attr(conditions, 'NotOnOrAfter'),
      subject_not_on_or_after: attr(confData, 'NotOnOrAfter'),
      recipient: attr(confData, 'Recipient'),
      audiences,
      authn_instant: attr(authn, 'AuthnInstant'),
      session_index: attr(authn, 'SessionIndex'),
      signature_algorithm: sig.signatureAlgorithm ?? '',
      certificate_sha256: cert.fingerprint_sha256,
    };
  }
  throw badSignature('the signature does not verify with a signing certificate of the issuer\u2019s metadata');
}
