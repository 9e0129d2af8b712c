import { password } from '../../lib/credentials/types/password.js';
import { cryptoWallet } from '../../lib/credentials/types/crypto-wallet.js';
import { apiToken } from '../../lib/credentials/types/api-token.js';
import { codeSigningKey } from '../../lib/credentials/types/code-signing-key.js';
import { integration, serviceConfig } from '../../lib/credentials/types/integrations.js';
import { jksKeystore } from '../../lib/credentials/types/jks-keystore.js';
import { describeType, renderResource, type CredentialType } from '../../lib/credentials/model.js';
import { totpToken } from '../../lib/credentials/types/totp-token.js';
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
} from '../../lib/credentials/types/basic.js';
import { yubikey } from '../../lib/credentials/types/yubikey.js';

/**
 * Every typed resource spec (the 17 credential collections, passwords, crypto wallets, API
 * tokens) joined with its catalogue entry, for the tests that walk all of them. Production
 * code never loads them all: each handler module imports its own type (lib/credentials/types/).
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

/** A registry type by its collection segment (`wifi-credentials`), or undefined. */
export const typeByCollection = (collection: string): CredentialType | undefined => BY_COLLECTION.get(collection);

export { renderResource, type CredentialType };
