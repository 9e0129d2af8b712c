import { createHash } from 'node:crypto';
import * as z from 'zod/v4';
import type { CallContext } from '../auth/principal.js';
import type { Change } from '../audit/audit.js';
import { DAY_MS, daysLeft, emitNoticeOnce, thresholdFor } from '../events/expiry.js';
import { eventPut } from '../outbox/outbox.js';
import { badRequest, conflict, notFound } from '../core/errors.js';
import { newId, nowIso } from '../ids.js';
import { tableName } from '../store/client.js';
import { entity, nullable } from '../store/entity.js';
import { keys } from '../store/keys.js';
import { actorName } from '../resources/store.js';
import type { TxItem } from '../store/tx.js';
import { type CertInfo, locateAssertion, parseMetadata, verifyAssertion, xmlText } from './saml-xml.js';
import type { CheckReplayBody, CreateMetadataBody, StoreAssertionBody, UpdateMetadataBody } from './saml-schemas.js';
import { commitChange, deleteAt, listItems, putAt, putNew, readItem } from '../resources/items.js';
import { markAssertionSeen } from './store.js';

/**
 * SAML metadata and assertions (`/api/v1/saml/...`).
 *
 * Metadata: one md:EntityDescriptor per record, its XML kept exactly as given (GET .../xml
 * answers it byte for byte as application/samlmetadata+xml), with what was parsed from it:
 * entityID (unique in the account: a `SAMLENTITY#<sha256>` item claims it), roles, endpoints,
 * certificates with their use and validity; `certificates_expire_at` is the earliest expiry.
 *
 * Assertions: verified against the signing certificates of the metadata whose entityID is the
 * assertion's issuer (lib/federation/saml-xml.ts), refused when expired or not yet valid
 * (60 s skew), then recorded: issuer, subject, conditions, audiences, NotOnOrAfter. The
 * assertion XML itself is not kept (only its SHA-256).
 *
 * Replay: check-replay claims `SAMLREPLAY#<sha256(issuer, id)>` with a conditional PutItem
 * (expiring with the assertion): the first claim is fresh, every later one — concurrent ones
 * included, DynamoDB serialises conditional writes of one item — is a replay (409).
 */
const SKEW_MS = 60_000;
const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

const Cert = z.object({
  use: z.enum(['signing', 'encryption', 'both']),
  pem: z.string(),
  fingerprint_sha256: z.string(),
  subject: z.string(),
  not_before: z.string(),
  not_after: z.string(),
});

const MetadataItem = entity(
  'SAML metadata',
  z.object({
    id: z.string(),
    entity_id: z.string(),
    description: z.string().default(''),
    roles: z.array(z.string()),
    endpoints: z.array(z.object({ role: z.string(), kind: z.string(), binding: z.string(), location: z.string() })),
    certificates: z.array(Cert),
    certificates_expire_at: nullable(z.string()),
    signed: z.boolean(),
    valid_until: nullable(z.string()),
    xml_sha256: z.string(),
    version: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
    created_by: nullable(z.string()),
  }),
);
type Metadata = ReturnType<typeof MetadataItem.parse>;
const LIST_FIELDS = MetadataItem.fields;

const metadataChange = (verb: 'created' | 'updated' | 'deleted', m: Metadata): Change => ({
  action: `saml_metadata.${verb.slice(0, -1)}`,
  resource: { type: 'saml_metadata', id: m.id, name: m.entity_id },
  event: { type: `saml_metadata.${verb}`, data: { id: m.id, entity_id: m.entity_id } },
});

async function readMetadata(tenantId: string, id: string): Promise<{ meta: Metadata; xml: string } | undefined> {
  const item = await readItem(keys.samlMetadata(tenantId, id));
  return item ? { meta: MetadataItem.parse(item), xml: item.xml as string } : undefined;
}

async function foundMetadata(ctx: CallContext, id: string) {
  const m = await readMetadata(ctx.principal.tenantId, id);
  if (!m) throw notFound('SAML metadata');
  return m;
}

export async function getMetadata(ctx: CallContext, id: string): Promise<Metadata> {
  return (await foundMetadata(ctx, id)).meta;
}

export async function getMetadataXml(ctx: CallContext, id: string): Promise<string> {
  return (await foundMetadata(ctx, id)).xml;
}

export async function listMetadata(ctx: CallContext, page: { limit: number; offset: number; cursor?: string | undefined }) {
  const out = await listItems(ctx.principal.tenantId, keys.samlMetadataPrefix, page, LIST_FIELDS);
  return { metadata: out.items.map((i) => MetadataItem.parse(i)), nextCursor: out.nextCursor };
}

const earliest = (certs: readonly CertInfo[]) => certs.map((c) => c.not_after).sort()[0] ?? null;

function fromXml(xml: string) {
  const parsed = parseMetadata(xml);
  return {
    entity_id: parsed.entity_id,
    roles: parsed.roles,
    endpoints: parsed.endpoints,
    certificates: parsed.certificates,
    certificates_expire_at: earliest(parsed.certificates),
    signed: parsed.signed,
    valid_until: parsed.valid_until,
    xml_sha256: sha256(xml),
  };
}

const entityClaim = (tid: string, entityId: string, metadataId: string): TxItem =>
  putNew(keys.samlEntity(tid, sha256(entityId)), { metadata_id: metadataId, entity_id: entityId });
const entityTaken = (entityId: string) => conflict(`metadata for entityID ${entityId} is already stored`, 'already_exists');

export async function createMetadata(ctx: CallContext, body: CreateMetadataBody): Promise<Metadata> {
  const tid = ctx.principal.tenantId;
  const xml = xmlText(body.xml, 'body.xml');
  const at = nowIso();
  const meta: Metadata = {
    id: newId(),
    description: body.description ?? '',
    ...fromXml(xml),
    version: 1,
    created_at: at,
    updated_at: at,
    created_by: actorName(ctx),
  };
  await commitChange(
    ctx,
    [entityClaim(tid, meta.entity_id, meta.id), putNew(keys.samlMetadata(tid, meta.id), { ...meta, xml })],
    metadataChange('created', meta),
    (i) => (i === 0 ? entityTaken(meta.entity_id) : undefined),
  );
  return meta;
}

export async function updateMetadata(ctx: CallContext, id: string, body: UpdateMetadataBody): Promise<Metadata> {
  const tid = ctx.principal.tenantId;
  const current = await foundMetadata(ctx, id);
  const xml = body.xml !== undefined ? xmlText(body.xml, 'body.xml') : current.xml;
  const next: Metadata = {
    ...current.meta,
    ...(body.xml !== undefined ? fromXml(xml) : {}),
    description: body.description ?? current.meta.description,
    version: current.meta.version + 1,
    updated_at: nowIso(),
  };
  const items: TxItem[] = [putAt(keys.samlMetadata(tid, id), { ...next, xml }, current.meta.version)];
  const moved = next.entity_id !== current.meta.entity_id;
  if (moved) {
    items.push(entityClaim(tid, next.entity_id, id), {
      Delete: { TableName: tableName(), Key: keys.samlEntity(tid, sha256(current.meta.entity_id)) },
    });
  }
  await commitChange(ctx, items, metadataChange('updated', next), (i) => (i === 1 ? entityTaken(next.entity_id) : undefined));
  return next;
}

export async function deleteMetadata(ctx: CallContext, id: string): Promise<Metadata> {
  const tid = ctx.principal.tenantId;
  const { meta } = await foundMetadata(ctx, id);
  await commitChange(
    ctx,
    [deleteAt(keys.samlMetadata(tid, id), meta.version), { Delete: { TableName: tableName(), Key: keys.samlEntity(tid, sha256(meta.entity_id)) } }],
    metadataChange('deleted', meta),
  );
  return meta;
}

async function metadataOfIssuer(tenantId: string, issuer: string): Promise<Metadata | undefined> {
  const claim = await readItem(keys.samlEntity(tenantId, sha256(issuer)));
  if (!claim) return undefined;
  return (await readMetadata(tenantId, claim.metadata_id as string))?.meta;
}

/**
 * Certificate expiry, as certificates do it (functions/certificates/expiry.ts): one
 * `saml_metadata.certificate_expiring` per certificate and warning threshold (30, 7 and 1 days
 * before not_after), made exactly-once by a notice item written in the same transaction as
 * the outbox event (it expires a day after the certificate). The hourly certificate expiry
 * sweeper calls this for every account.
 */

export async function emitExpiringSamlCertificates(tenantId: string, opts: { now?: Date } = {}): Promise<{ emitted: number; checked: number }> {
  const now = opts.now ?? new Date();
  let emitted = 0;
  let checked = 0;
  let cursor: string | undefined;
  do {
    const page = await listItems(tenantId, keys.samlMetadataPrefix, { limit: 200, offset: 0, cursor }, LIST_FIELDS);
    for (const meta of page.items.map((i) => MetadataItem.parse(i))) {
      for (const cert of meta.certificates) {
        checked++;
        const notAfter = new Date(cert.not_after);
        const threshold = thresholdFor(notAfter, now);
        if (threshold === undefined) continue;
        const noticed = await emitNoticeOnce([
          putNew(keys.samlCertNotice(tenantId, meta.id, cert.fingerprint_sha256, threshold), {
            ttl: Math.ceil((notAfter.getTime() + DAY_MS) / 1000),
          }),
          eventPut(tenantId, 'saml_metadata.certificate_expiring', {
            id: meta.id,
            entity_id: meta.entity_id,
            fingerprint_sha256: cert.fingerprint_sha256,
            use: cert.use,
            not_after: cert.not_after,
            days_left: daysLeft(notAfter, now),
            threshold_days: threshold,
          }),
        ]);
        if (noticed) emitted++;
      }
    }
    cursor = page.nextCursor;
  } while (cursor);
  return { emitted, checked };
}

// ---- assertions -----------------------------------------------------------------------

const AssertionItem = entity(
  'SAML assertion',
  z.object({
    id: z.string(),
    assertion_id: z.string(),
    issuer: z.string(),
    metadata_id: z.string(),
    subject: nullable(z.string()),
    subject_format: nullable(z.string()),
    issue_instant: nullable(z.string()),
    not_before: nullable(z.string()),
    not_on_or_after: z.string(),
    recipient: nullable(z.string()),
    audiences: z.array(z.string()),
    authn_instant: nullable(z.string()),
    session_index: nullable(z.string()),
    signature_algorithm: z.string(),
    certificate_sha256: z.string(),
    xml_sha256: z.string(),
    version: z.number().int(),
    created_at: z.string(),
    created_by: nullable(z.string()),
  }),
);
type Assertion = ReturnType<typeof AssertionItem.parse>;

const assertionChange = (verb: 'stored' | 'deleted', a: Assertion): Change => ({
  action: `saml_assertion.${verb === 'stored' ? 'store' : 'delete'}`,
  resource: { type: 'saml_assertion', id: a.id, name: a.assertion_id },
  detail: { issuer: a.issuer },
  event: { type: `saml_assertion.${verb}`, data: { id: a.id, assertion_id: a.assertion_id, issuer: a.issuer, metadata_id: a.metadata_id } },
});

const isoOrNull = (s: string | null) => {
  if (s === null) return null;
  const t = Date.parse(s);
  if (Number.isNaN(t))
    throw badRequest(`not a date: ${s.slice(0, 40)}`, [{ path: 'body.assertion', message: 'a time attribute is not an xs:dateTime' }]);
  return new Date(t).toISOString();
};

export async function storeAssertion(ctx: CallContext, body: StoreAssertionBody): Promise<Assertion> {
  const tid = ctx.principal.tenantId;
  const xml = xmlText(body.assertion, 'body.assertion');
  const located = locateAssertion(xml);
  const meta = await metadataOfIssuer(tid, located.issuer);
  if (!meta) {
    throw badRequest(
      'no stored SAML metadata has this issuer as its entityID',
      [{ path: 'body.assertion', message: 'unknown issuer' }],
      'unknown_issuer',
    );
  }
  const v = verifyAssertion(
    xml,
    located,
    meta.certificates.filter((c) => c.use !== 'encryption'),
  );
  if (v.issuer !== meta.entity_id)
    throw badRequest(
      'the signed Issuer is not the metadata\u2019s entityID',
      [{ path: 'body.assertion', message: 'issuer mismatch' }],
      'saml_signature_invalid',
    );
  const notOnOrAfter = isoOrNull(v.not_on_or_after) ?? isoOrNull(v.subject_not_on_or_after);
  const notBefore = isoOrNull(v.not_before);
  const now = Date.now();
  if (!notOnOrAfter)
    throw badRequest('the assertion has no NotOnOrAfter (Conditions or SubjectConfirmationData)', [
      { path: 'body.assertion', message: 'no NotOnOrAfter' },
    ]);
  if (Date.parse(notOnOrAfter) <= now - SKEW_MS)
    throw badRequest('the assertion is past its NotOnOrAfter', [{ path: 'body.assertion', message: 'expired' }], 'assertion_expired');
  if (notBefore && Date.parse(notBefore) > now + SKEW_MS)
    throw badRequest('the assertion is not yet valid (NotBefore)', [{ path: 'body.assertion', message: 'not yet valid' }]);
  const a: Assertion = {
    id: newId(),
    assertion_id: v.assertion_id,
    issuer: v.issuer,
    metadata_id: meta.id,
    subject: v.subject,
    subject_format: v.subject_format,
    issue_instant: isoOrNull(v.issue_instant),
    not_before: notBefore,
    not_on_or_after: notOnOrAfter,
    recipient: v.recipient,
    audiences: v.audiences,
    authn_instant: isoOrNull(v.authn_instant),
    session_index: v.session_index,
    signature_algorithm: v.signature_algorithm,
    certificate_sha256: v.certificate_sha256,
    xml_sha256: sha256(xml),
    version: 1,
    created_at: nowIso(),
    created_by: actorName(ctx),
  };
  await commitChange(ctx, [putNew(keys.samlAssertion(tid, a.id), { ...a })], assertionChange('stored', a));
  return a;
}

export async function getAssertion(ctx: CallContext, id: string): Promise<Assertion> {
  const item = await readItem(keys.samlAssertion(ctx.principal.tenantId, id));
  if (!item) throw notFound('SAML assertion');
  return AssertionItem.parse(item);
}

export async function listAssertions(ctx: CallContext, page: { limit: number; offset: number; cursor?: string | undefined }) {
  const out = await listItems(ctx.principal.tenantId, keys.samlAssertionPrefix, page, AssertionItem.fields);
  return { assertions: out.items.map((i) => AssertionItem.parse(i)), nextCursor: out.nextCursor };
}

export async function deleteAssertion(ctx: CallContext, id: string): Promise<Assertion> {
  const a = await getAssertion(ctx, id);
  await commitChange(ctx, [deleteAt(keys.samlAssertion(ctx.principal.tenantId, id), a.version)], assertionChange('deleted', a));
  return a;
}

/** Claims an assertion id of an issuer until its NotOnOrAfter: true when fresh; a replay throws 409. */
export async function checkReplay(ctx: CallContext, body: CheckReplayBody): Promise<{ fresh: true; expires_at: string }> {
  const until = new Date(body.not_on_or_after);
  if (until.getTime() <= Date.now() - SKEW_MS) {
    throw badRequest('the assertion is past its NotOnOrAfter', [{ path: 'body.not_on_or_after', message: 'in the past' }], 'assertion_expired');
  }
  if (!(await markAssertionSeen(ctx.principal.tenantId, sha256(`${body.issuer}\u0000${body.assertion_id}`), until)))
    throw conflict('this assertion was seen before: a replay', 'assertion_replayed');
  return { fresh: true, expires_at: until.toISOString() };
}
