import { secp256k1 } from '@noble/curves/secp256k1.js';
import { ripemd160 } from '@noble/hashes/legacy.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bech32, createBase58check } from '@scure/base';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync, validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import * as z from 'zod/v4';
import { Secret, Text } from '../fields.js';
import { Problems, type Fields, type TypeSpec } from '../model.js';

/**
 * Crypto wallets: chain, address and the secret seed (BIP-39 mnemonic, optional BIP-39
 * passphrase) or private key. The address is derived with @scure/bip39, @scure/bip32,
 * @noble/curves and @noble/hashes, and an address that does not match its seed or key is
 * refused (400):
 *
 * - bitcoin, p2wpkh (default): BIP-84 m/84'/0'/0'/0/0 (testnet m/84'/1'/...), bech32 bc1q.../tb1q...
 * - bitcoin, p2pkh: BIP-44 m/44'/0'/0'/0/0, Base58Check 1... (testnet m/44'/1'/..., m.../n...)
 * - ethereum: BIP-44 m/44'/60'/0'/0/0, keccak-256 of the public key, EIP-55 checksum.
 *
 * A private key (64 hex digits) stands for the key at the derivation path.
 */
const base58check = createBase58check(sha256);
const hash160 = (b: Uint8Array) => ripemd160(sha256(b));

const Mnemonic = z
  .string()
  .transform((m) => m.normalize('NFKD').trim().toLowerCase().split(/\s+/).join(' '))
  .refine((m) => validateMnemonic(m, wordlist), { message: 'not a valid BIP-39 English mnemonic (word list or checksum)' });
const DerivationPath = z.string().regex(/^m(\/\d{1,10}'?)+$/, "a BIP-32 path like m/84'/0'/0'/0/0");
const PrivateKeyHex = z
  .string()
  .regex(/^(0x)?[0-9a-fA-F]{64}$/, '32 bytes as 64 hex digits')
  .transform((s) => s.replace(/^0x/, '').toLowerCase());

/** EIP-55 mixed-case checksum of a 20-byte address (hex, no 0x). */
export function eip55(hex: string): string {
  const lower = hex.toLowerCase();
  const hash = Buffer.from(keccak_256(new TextEncoder().encode(lower))).toString('hex');
  return `0x${[...lower].map((c, i) => (parseInt(hash[i]!, 16) >= 8 ? c.toUpperCase() : c)).join('')}`;
}

function ethereumAddress(privateKey: Uint8Array): string {
  const pub = secp256k1.getPublicKey(privateKey, false);
  return eip55(Buffer.from(keccak_256(pub.slice(1)).slice(-20)).toString('hex'));
}

function bitcoinAddress(privateKey: Uint8Array, type: 'p2wpkh' | 'p2pkh', network: 'mainnet' | 'testnet'): string {
  const h = hash160(secp256k1.getPublicKey(privateKey, true));
  if (type === 'p2wpkh') return bech32.encode(network === 'mainnet' ? 'bc' : 'tb', [0, ...bech32.toWords(h)]);
  return base58check.encode(Uint8Array.from([network === 'mainnet' ? 0x00 : 0x6f, ...h]));
}

function defaultPath(f: Fields): string {
  const coin = f.chain === 'ethereum' ? 60 : f.network === 'testnet' ? 1 : 0;
  const purpose = f.chain === 'bitcoin' && f.address_type === 'p2wpkh' ? 84 : 44;
  return `m/${purpose}'/${coin}'/0'/0/0`;
}

/** The address a wallet's secret derives to. */
export function deriveAddress(f: Fields): string {
  const key =
    f.private_key !== undefined
      ? Uint8Array.from(Buffer.from(f.private_key as string, 'hex'))
      : HDKey.fromMasterSeed(mnemonicToSeedSync(f.mnemonic as string, (f.passphrase as string | undefined) ?? '')).derive(f.derivation_path as string)
          .privateKey!;
  return f.chain === 'ethereum'
    ? ethereumAddress(key)
    : bitcoinAddress(key, f.address_type as 'p2wpkh' | 'p2pkh', f.network as 'mainnet' | 'testnet');
}

/** An address as given, in the form it is compared and stored (bech32 lower case, Ethereum EIP-55). */
function normalise(f: Fields, p: Problems): string | undefined {
  const a = f.address as string | undefined;
  if (a === undefined) return undefined;
  if (f.chain === 'ethereum') {
    if (!/^0x[0-9a-fA-F]{40}$/.test(a)) return void p.add('address', 'an Ethereum address is 0x and 40 hex digits');
    const sum = eip55(a.slice(2));
    const mixed = a.slice(2) !== a.slice(2).toLowerCase() && a.slice(2) !== a.slice(2).toUpperCase();
    if (mixed && a !== sum) return void p.add('address', 'the EIP-55 checksum of this address is wrong');
    return sum;
  }
  return f.address_type === 'p2wpkh' ? a.toLowerCase() : a;
}

export const cryptoWallet: TypeSpec = {
  type: 'crypto_wallet',
  summary:
    'A cryptocurrency wallet: chain, address and the seed or private key it derives from (Bitcoin and Ethereum addresses are checked against the seed).',
  fields: z.strictObject({
    chain: z.enum(['bitcoin', 'ethereum']),
    network: z.enum(['mainnet', 'testnet']).default('mainnet'),
    address_type: z.enum(['p2wpkh', 'p2pkh']).optional(),
    derivation_path: DerivationPath.optional(),
    address: z.string().trim().min(26).max(90).optional(),
    mnemonic: Mnemonic.optional(),
    passphrase: Secret(256).optional(),
    private_key: PrivateKeyHex.optional(),
    label: Text(128).optional(),
  }),
  secret: ['mnemonic', 'passphrase', 'private_key'],
  update: 'merge',
  updateFields: z.strictObject({ label: Text(128).nullable() }),
  updateSemantics:
    'Partial update: name, description, tags and label change when given; the chain, address and key material never change (a new seed is a new wallet).',
  prepare(_ctx, f, current) {
    if (current !== undefined) return f.label === null ? { ...f, label: undefined } : f;
    const p = new Problems();
    p.check(
      (f.mnemonic === undefined) !== (f.private_key === undefined),
      'mnemonic',
      'send either mnemonic (with optional passphrase) or private_key',
    );
    p.check(!(f.passphrase !== undefined && f.mnemonic === undefined), 'passphrase', 'a passphrase belongs to a mnemonic');
    p.check(!(f.chain === 'ethereum' && f.address_type !== undefined), 'address_type', 'address_type is for bitcoin');
    p.check(!(f.chain === 'ethereum' && f.network === 'testnet'), 'network', 'Ethereum testnets share mainnet addresses: use mainnet');
    p.throwIfAny();
    const g: Fields = { ...f, ...(f.chain === 'bitcoin' ? { address_type: f.address_type ?? 'p2wpkh' } : {}) };
    g.derivation_path ??= defaultPath(g);
    if (f.private_key !== undefined)
      p.check(secp256k1.utils.isValidSecretKey(Buffer.from(f.private_key as string, 'hex')), 'private_key', 'not a valid secp256k1 private key');
    const given = normalise(g, p);
    p.throwIfAny();
    const derived = deriveAddress(g);
    p.check(
      given === undefined || given === derived,
      'address',
      `the address does not match the ${f.mnemonic !== undefined ? 'mnemonic' : 'private key'} (${String(g.derivation_path)})`,
    ).throwIfAny();
    return { ...g, address: derived };
  },
};
