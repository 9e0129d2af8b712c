import { createDecipheriv, timingSafeEqual } from 'node:crypto';
import * as z from 'zod/v4';
import { tableName } from '../../store/client.js';
import { keys } from '../../store/keys.js';
import { Hex, Text } from '../fields.js';
import type { Fields, TypeSpec } from '../model.js';

/**
 * Yubico OTP (the YubiKey's OTP slot): a 44-character modhex string = public id (12
 * modhex) + 32 modhex of one AES-128 block. Decrypted with the slot's AES key the block is
 * private id (6) | usage counter (2, LE) | timestamp (3, LE) | session counter (1) |
 * random (2) | CRC-16 (2, LE); the CRC over all 16 bytes leaves the residue 0xf0b8.
 * The counter (usage << 8 | session) must grow strictly: it is kept beside the credential
 * (keys.otpCounter) and advanced with a conditional write, so a replayed OTP is refused.
 */
export const MODHEX = 'cbdefghijklnrtuv';
const modhexRe = (min: number, max: number) => new RegExp(`^[${MODHEX}]{${min},${max}}$`);
const PublicId = z
  .string()
  .toLowerCase()
  .regex(modhexRe(2, 32), 'modhex (cbdefghijklnrtuv), up to 16 bytes')
  .refine((s) => s.length % 2 === 0, { message: 'an even number of modhex characters' });
export const Otp = z.string().trim().toLowerCase().regex(modhexRe(32, 64), 'a Yubico OTP: modhex, the public id then 32 characters');

export const modhexToBytes = (s: string) => Buffer.from([...s].map((c) => MODHEX.indexOf(c).toString(16)).join(''), 'hex');

/** CRC-16 of ISO/IEC 13239 (the YubiKey's), without the final complement. */
export function crc16(data: Uint8Array): number {
  let crc = 0xffff;
  for (const byte of data) {
    crc ^= byte;
    for (let i = 0; i < 8; i++) crc = crc & 1 ? (crc >>> 1) ^ 0x8408 : crc >>> 1;
  }
  return crc;
}
export const CRC_OK_RESIDUE = 0xf0b8;

interface DecodedOtp {
  readonly publicId: string;
  readonly privateId: Buffer;
  readonly usageCounter: number;
  readonly sessionCounter: number;
  readonly timestamp: number;
  /** usage << 8 | session: strictly increasing across accepted OTPs. */
  readonly counter: number;
}

type OtpCheck = { ok: true; otp: DecodedOtp } | { ok: false; reason: string };

export function decodeOtp(otp: string, fields: Fields): OtpCheck {
  const publicId = otp.slice(0, otp.length - 32);
  if (publicId !== fields.public_id) return { ok: false, reason: 'the OTP was not made by this YubiKey (public id differs)' };
  const decipher = createDecipheriv('aes-128-ecb', Buffer.from(fields.aes_key as string, 'hex'), null).setAutoPadding(false);
  const block = Buffer.concat([decipher.update(modhexToBytes(otp.slice(-32))), decipher.final()]);
  if (crc16(block) !== CRC_OK_RESIDUE) return { ok: false, reason: 'the OTP does not decrypt with this key (CRC mismatch)' };
  const privateId = block.subarray(0, 6);
  if (!timingSafeEqual(privateId, Buffer.from(fields.private_id as string, 'hex'))) return { ok: false, reason: 'the private id does not match' };
  const usageCounter = block.readUInt16LE(6);
  const sessionCounter = block[11]!;
  return {
    ok: true,
    otp: { publicId, privateId, usageCounter, sessionCounter, timestamp: block.readUIntLE(8, 3), counter: usageCounter * 256 + sessionCounter },
  };
}

export const yubikey: TypeSpec = {
  type: 'yubikey',
  summary: 'A YubiKey OTP slot programmed with a known AES key: validates Yubico OTPs, refusing replays.',
  fields: z.strictObject({
    public_id: PublicId,
    private_id: Hex(6),
    aes_key: Hex(16),
    serial: z.number().int().min(1).max(4_294_967_295).optional(),
    slot: z.union([z.literal(1), z.literal(2)]).default(1),
    model: Text(64).optional(),
  }),
  secret: ['private_id', 'aes_key'],
  update: 'replace',
  immutable: ['public_id', 'private_id', 'aes_key'],
  updateSemantics:
    'PUT replaces serial, slot and model; public_id, private_id and aes_key cannot change (they may be repeated unchanged or left out: a reprogrammed slot is a new YubiKey credential, with a fresh OTP counter).',
  extraDeletes: (tenantId, id) => [{ Delete: { TableName: tableName(), Key: keys.otpCounter(tenantId, id) } }],
};

/* Responses of the YubiKey collection's own route (functions/credentials/yubikeys.ts). */
export const YubikeyValidation = z.strictObject({
  valid: z.literal(true),
  status: z.literal('OK'),
  id: z.uuid(),
  public_id: z.string().describe('The OTP’s public id (modhex).'),
  usage_counter: z.int().min(0),
  session_counter: z.int().min(0),
  timestamp: z.int().min(0),
  counter: z.int().min(0).describe('The combined counter the next OTP must exceed.'),
});
