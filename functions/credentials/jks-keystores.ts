import * as z from 'zod/v4';
import { conflict, defineHandler, notFound, ok, created } from '../../lib/http/index.js';
import { etagOf } from '../../lib/resources/store.js';
import { buildPkcs12 } from '../../lib/pki/pkcs12.js';
import { collectionHandlers } from '../../lib/credentials/handlers.js';
import { IdParams } from '../../lib/schemas.js';
import {
  Alias,
  EntryInput,
  JksEntries,
  JksEntryAdded,
  JksEntryRemoved,
  JksExport,
  jksKeystore,
  type StoredEntry,
  toStoredEntry,
} from '../../lib/credentials/types/jks-keystore.js';
import { mutateTyped, openTyped, readTyped } from '../../lib/credentials/service.js';

/** Entries and export of /api/v1/jks-keystores/{id} (and the five CRUD routes, from lib/credentials/handlers.ts). */
const crud = collectionHandlers(jksKeystore);
/** The collection's five CRUD routes. */
export const { list, create, get, update, remove } = crud;
const def = crud.def;
const entriesOf = (meta: Record<string, unknown>) => (meta.entries ?? []) as StoredEntry[];

export const listEntries = defineHandler({
  summary: 'List a keystore’s entries',
  description: 'Each entry’s alias, kind, certificates and leaf facts; never a private key.',
  responses: { 200: JksEntries },
  params: IdParams,
  async handler({ ctx, params }) {
    const record = await readTyped(ctx.principal.tenantId, def, params.id);
    const entries = entriesOf(record.meta);
    return ok({ entries, total: entries.length }, { ETag: etagOf(record) });
  },
});

/** Adds an entry as a new version of the keystore; an alias in use is 409. */
export const addEntry = defineHandler({
  summary: 'Add a keystore entry',
  description:
    'Adds a private-key entry (the key must match the first certificate) or a trusted certificate as a new version of the keystore; an alias in use is 409.',
  responses: { 201: JksEntryAdded },
  errors: ['already_exists', 'stale_etag', 'precondition_failed', 'invalid_key', 'passphrase_required', 'wrong_passphrase'],
  params: IdParams,
  body: EntryInput,
  async handler({ ctx, params, body, headers }) {
    const { entry, privateKey } = toStoredEntry(body);
    const { record } = await mutateTyped(
      ctx,
      def,
      params.id,
      (current) => {
        if (entriesOf(current).some((e) => e.alias === entry.alias))
          throw conflict(`alias "${entry.alias}" is already in this keystore`, 'already_exists');
        const keys = { ...(current.private_keys as Record<string, string>), ...(privateKey ? { [entry.alias]: privateKey } : {}) };
        return { ...current, entries: [...entriesOf(current), entry], private_keys: keys };
      },
      { ifMatch: headers['if-match'], detail: { entry_added: entry.alias } },
    );
    return created({ entry, version: record.version }, { ETag: etagOf(record) });
  },
});

export const removeEntry = defineHandler({
  summary: 'Remove a keystore entry',
  responses: { 200: JksEntryRemoved },
  errors: ['stale_etag', 'precondition_failed'],
  params: z.strictObject({ id: z.uuid(), alias: Alias }),
  async handler({ ctx, params, headers }) {
    const { record } = await mutateTyped(
      ctx,
      def,
      params.id,
      (current) => {
        if (!entriesOf(current).some((e) => e.alias === params.alias)) throw notFound('keystore entry');
        const { [params.alias]: _removed, ...keys } = current.private_keys as Record<string, string>;
        return { ...current, entries: entriesOf(current).filter((e) => e.alias !== params.alias), private_keys: keys };
      },
      { ifMatch: headers['if-match'], detail: { entry_removed: params.alias } },
    );
    return ok({ deleted: true, alias: params.alias, version: record.version }, { ETag: etagOf(record) });
  },
});

const der = (pem: string) => Buffer.from(pem.replace(/-----(BEGIN|END) [A-Z ]+-----|\s/g, ''), 'base64');

/**
 * The keystore as PKCS#12 protected by its store password (base64), which Java 17's
 * `keytool -list -storetype PKCS12` reads. JKS itself: no maintained library writes it, and
 * Java 9+ reads PKCS#12 wherever it reads JKS (keystore.type.compat), so only PKCS#12.
 */
export const exportKeystore = defineHandler({
  summary: 'Export a keystore as PKCS#12',
  description: 'The keystore with its private keys as PKCS#12 (base64), protected by its store password; `keytool -list -storetype PKCS12` reads it.',
  responses: { 200: JksExport },
  params: IdParams,
  query: z.strictObject({ format: z.enum(['pkcs12']).default('pkcs12') }),
  async handler({ ctx, params }) {
    const { record, fields } = await openTyped(ctx.principal.tenantId, def, params.id);
    const entries = entriesOf(fields);
    const privateKeys = (fields.private_keys ?? {}) as Record<string, string>;
    const p12 = await buildPkcs12(
      fields.store_password as string,
      entries
        .filter((e) => e.kind === 'private-key')
        .map((e) => ({ alias: e.alias, privateKey: der(privateKeys[e.alias]!), chain: e.certificate_chain.map(der) })),
      entries.filter((e) => e.kind === 'trusted-certificate').map((e) => ({ alias: e.alias, certificate: der(e.certificate_chain[0]!) })),
    );
    return ok(
      {
        id: record.id,
        format: 'pkcs12',
        filename: `${record.name.replace(/[^A-Za-z0-9._-]/g, '_')}.p12`,
        entries: entries.length,
        keystore_base64: p12.toString('base64'),
      },
      { ETag: etagOf(record) },
    );
  },
});
