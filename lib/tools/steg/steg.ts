import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from 'node:crypto';
import { PNG } from 'pngjs';
import { badRequest } from '../../core/errors.js';

/**
 * PNG steganography: the payload is sealed with AES-256-GCM under a key derived from the
 * passphrase with scrypt, and its bits go into the least significant bit of the red, green
 * and blue samples (alpha untouched) at positions chosen by a key-derived permutation, so
 * the change is ±1 in a sample (invisible) and scattered over the whole image.
 *
 * Layout, in sample LSBs: samples 0-127 (in order) hold the 16-byte scrypt salt; the key
 * (scrypt N=2^15, r=8, p=1 → 64 bytes) is the AEAD key and the seed of the permutation
 * (AES-256-CTR keystream, partial Fisher-Yates over the remaining samples) that places
 * `length (4) ‖ nonce (12) ‖ ciphertext ‖ tag (16)`. A wrong passphrase gives another
 * permutation and key: the tag fails and nothing is returned. A lossless re-encoding keeps
 * the samples and still decodes; a lossy one (JPEG, resizing) changes them and fails the same way.
 */
const SALT = 16;
const SALT_BITS = SALT * 8;
const OVERHEAD = 4 + 12 + 16;
const AAD = Buffer.from('secrets-api png-steg v1');
const SCRYPT = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;

interface Image {
  readonly width: number;
  readonly height: number;
  readonly data: Buffer;
}

function readPng(png: Buffer): Image {
  try {
    const img = PNG.sync.read(png);
    return { width: img.width, height: img.height, data: img.data };
  } catch {
    throw badRequest('the carrier is not a readable PNG image', [{ path: 'body.png_base64', message: 'not a PNG' }]);
  }
}

/** Byte offset in RGBA data of the k-th R/G/B sample. */
const offset = (k: number) => Math.floor(k / 3) * 4 + (k % 3);
const samples = (img: Image) => img.width * img.height * 3;

/** Payload bytes an image can carry. */
export const capacity = (img: Pick<Image, 'width' | 'height'>) => Math.max(0, Math.floor((img.width * img.height * 3 - SALT_BITS) / 8) - OVERHEAD);

const deriveKey = (passphrase: string, salt: Buffer) => scryptSync(passphrase.normalize('NFC'), salt, 64, SCRYPT);

/** The first `count` positions of a key-derived permutation of the samples after the salt. */
function positions(seed: Buffer, total: number, count: number): Uint32Array {
  const n = total - SALT_BITS;
  const perm = new Uint32Array(n);
  for (let i = 0; i < n; i++) perm[i] = i + SALT_BITS;
  const stream = createCipheriv('aes-256-ctr', seed, Buffer.alloc(16));
  let pool = Buffer.alloc(0);
  let at = 0;
  const u32 = () => {
    if (at + 4 > pool.length) {
      pool = stream.update(Buffer.alloc(64 * 1024));
      at = 0;
    }
    const v = pool.readUInt32BE(at);
    at += 4;
    return v;
  };
  for (let j = 0; j < count; j++) {
    const range = n - j;
    const limit = Math.floor(0x1_0000_0000 / range) * range;
    let x = u32();
    while (x >= limit) x = u32();
    const k = j + (x % range);
    const t = perm[j]!;
    perm[j] = perm[k]!;
    perm[k] = t;
  }
  return perm.subarray(0, count);
}

function writeBits(img: Image, where: ArrayLike<number>, bytes: Buffer): void {
  for (let i = 0; i < bytes.length * 8; i++) {
    const bit = (bytes[i >> 3]! >> (7 - (i & 7))) & 1;
    const o = offset(where[i]!);
    img.data[o] = (img.data[o]! & 0xfe) | bit;
  }
}

function readBits(img: Image, where: ArrayLike<number>, from: number, length: number): Buffer {
  const out = Buffer.alloc(length);
  for (let i = 0; i < length * 8; i++) out[i >> 3]! |= (img.data[offset(where[from + i]!)]! & 1) << (7 - (i & 7));
  return out;
}

const sequential = (count: number) => Uint32Array.from({ length: count }, (_, i) => i);

export function encode(png: Buffer, payload: Buffer, passphrase: string): { png: Buffer; width: number; height: number; capacity: number } {
  const img = readPng(png);
  const cap = capacity(img);
  if (payload.length > cap) {
    throw badRequest(`the payload is ${payload.length} bytes; this ${img.width}x${img.height} image carries at most ${cap}: use a larger image`, [
      { path: 'body.payload', message: 'over the image capacity' },
    ]);
  }
  const salt = randomBytes(SALT);
  const key = deriveKey(passphrase, salt);
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key.subarray(0, 32), nonce).setAAD(AAD);
  const ct = Buffer.concat([cipher.update(payload), cipher.final(), cipher.getAuthTag()]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(ct.length - 16);
  const body = Buffer.concat([length, nonce, ct]);
  writeBits(img, sequential(SALT_BITS), salt);
  writeBits(img, positions(key.subarray(32), samples(img), body.length * 8), body);
  const out = new PNG({ width: img.width, height: img.height });
  img.data.copy(out.data);
  return { png: PNG.sync.write(out, { colorType: 6 }), width: img.width, height: img.height, capacity: cap };
}

const noPayload = () =>
  badRequest(
    'no payload opens with this passphrase: the passphrase is wrong, or the image was altered (re-encoded lossily, resized)',
    undefined,
    'steg_decode_failed',
  );

export function decode(png: Buffer, passphrase: string): Buffer {
  const img = readPng(png);
  const cap = capacity(img);
  if (cap <= 0) throw noPayload();
  const salt = readBits(img, sequential(SALT_BITS), 0, SALT);
  const key = deriveKey(passphrase, salt);
  const total = samples(img);
  const head = positions(key.subarray(32), total, 32);
  const length = readBits(img, head, 0, 4).readUInt32BE(0);
  if (length > cap) throw noPayload();
  const where = positions(key.subarray(32), total, (OVERHEAD + length) * 8);
  const body = readBits(img, where, 0, OVERHEAD + length);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.subarray(0, 32), body.subarray(4, 16)).setAAD(AAD);
    decipher.setAuthTag(body.subarray(16 + length));
    return Buffer.concat([decipher.update(body.subarray(16, 16 + length)), decipher.final()]);
  } catch {
    throw noPayload();
  }
}
