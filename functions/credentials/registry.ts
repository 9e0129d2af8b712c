import type { Route } from '../../lib/routes.js';
import { notFound } from '../../lib/http/errors.js';
import { password } from '../passwords/password.js';
import { cryptoWallet } from '../passwords/wallet.js';
import { apiToken } from '../tokens/schemas.js';
import { codeSigningKey } from './code-signing.js';
import { integration, serviceConfig } from './integrations.js';
import { jksKeystore } from './jks.js';
import { describeType, fieldsOf, renderResource, type CredentialType, type Fields } from './model.js';
import { totpToken } from './totp.js';
import {
  computerCredential,
  diskCredential,
  ldapBindCredential,
  ntlm,
  radiusCredential,
  rootCredential,
  socialCredential,
  softwareLicense,
  vpnCredential,
  wifiCredential,
  windowsCredential,
} from './types.js';
import { yubikey } from './yubikey.js';

/**
 * THE registry of typed resources: singular type name → collection path, scopes (from
 * lib/resource-types.ts), zod schemas (create and PUT bodies), secret fields, PUT
 * semantics and hooks. The generic CRUD (collection.ts) serves every type whose routes map
 * to it; cross-type features (history, shares, temporary access) look types up here by
 * their singular name and render records with `renderResource`.
 *
 * Extension points:
 * - a new collection: a TypeSpec (model.ts) in its own file, added to SPECS below, and its
 *   five routes in lib/routes.ts set to `credentials/collection.<list|create|get|update|remove>`;
 * - a new code-signing backend (e.g. `"backend": "pkcs11"`, the key generated inside an
 *   HSM): an entry in CODE_SIGNING_BACKENDS (code-signing.ts) — its body schema joins the
 *   POST body's variants and its `create` returns the stored fields;
 * - per-type validation/derivation: the spec's `prepare` hook; state beside the head that
 *   must go with it: `extraDeletes`.
 */
const SPECS = [
  computerCredential,
  codeSigningKey,
  diskCredential,
  integration,
  jksKeystore,
  ldapBindCredential,
  ntlm,
  radiusCredential,
  rootCredential,
  serviceConfig,
  socialCredential,
  softwareLicense,
  totpToken,
  vpnCredential,
  wifiCredential,
  windowsCredential,
  yubikey,
  password,
  cryptoWallet,
  apiToken,
];

export const CREDENTIAL_TYPES: readonly CredentialType[] = SPECS.map(describeType);

/** The 17 typed credential collections of the spec (credentials:* scopes). */
export const CREDENTIAL_COLLECTIONS: readonly CredentialType[] = CREDENTIAL_TYPES.filter((t) => t.scopes.read.includes('credentials:read'));

const BY_TYPE = new Map(CREDENTIAL_TYPES.map((t) => [t.type, t]));
const BY_COLLECTION = new Map(CREDENTIAL_TYPES.map((t) => [t.collection, t]));

/** A registry type by its singular name (`wifi_credential`), or undefined. */
export const typeByName = (type: string): CredentialType | undefined => BY_TYPE.get(type);

/** A registry type by its singular name; an unknown name is a 404 (for `{type}` routes). */
export function typeOrNotFound(type: string): CredentialType {
  const def = BY_TYPE.get(type);
  if (!def) throw notFound('resource type');
  return def;
}

/** A registry type by its collection segment (`wifi-credentials`), or undefined. */
export const typeByCollection = (collection: string): CredentialType | undefined => BY_COLLECTION.get(collection);

/** The type a route belongs to: `/api/v1/<collection>[/...]`. */
export function typeOfRoute(route: Route): CredentialType {
  const def = BY_COLLECTION.get(route.path.split('/')[3] ?? '');
  if (!def) throw new Error(`no registry type serves ${route.key}`);
  return def;
}

export { fieldsOf, renderResource, type CredentialType, type Fields };
