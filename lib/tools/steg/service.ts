import * as z from 'zod/v4';
import type { CallContext } from '../../auth/principal.js';
import { recordAudit } from '../../audit/audit.js';
import { badRequest } from '../../core/errors.js';
import { exactlyOneOf } from '../../schemas.js';
import { decode, encode } from './steg.js';

/** POST /api/v1/steg/encode and /decode (lib/tools/steg/steg.ts): audited with sizes only, never the payload or passphrase. */
const Png = z.base64().min(8).max(1_000_000);
const Passphrase = z.string().min(8).max(1024);

export const EncodeBody = exactlyOneOf(
  z.strictObject({
    png_base64: Png,
    /** The payload as text (UTF-8), or `payload_base64` for bytes. */
    payload: z
      .string()
      .min(1)
      .max(512 * 1024)
      .optional(),
    payload_base64: z.base64().min(1).max(700_000).optional(),
    passphrase: Passphrase,
  }),
  ['payload', 'payload_base64'],
  'send exactly one of payload or payload_base64',
  'payload',
);
export type EncodeBody = z.infer<typeof EncodeBody>;

export const DecodeBody = z.strictObject({ png_base64: Png, passphrase: Passphrase });

const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function carrier(b64: string): Buffer {
  const png = Buffer.from(b64, 'base64');
  if (!png.subarray(0, 8).equals(PNG_MAGIC)) {
    throw badRequest('png_base64 is not a PNG image (the PNG signature is missing)', [{ path: 'body.png_base64', message: 'not a PNG' }]);
  }
  return png;
}

export async function stegEncode(ctx: CallContext, body: EncodeBody) {
  const payload = body.payload !== undefined ? Buffer.from(body.payload, 'utf8') : Buffer.from(body.payload_base64!, 'base64');
  const out = encode(carrier(body.png_base64), payload, body.passphrase);
  await recordAudit(ctx, ctx.principal.tenantId, {
    action: 'steg.encode',
    resource: { type: 'steg_image', id: ctx.requestId },
    detail: { width: out.width, height: out.height, bytes: payload.length, capacity: out.capacity },
  });
  return { png_base64: out.png.toString('base64'), width: out.width, height: out.height, capacity: out.capacity, bytes: payload.length };
}

export async function stegDecode(ctx: CallContext, body: z.infer<typeof DecodeBody>) {
  const resource = { type: 'steg_image', id: ctx.requestId };
  let payload: Buffer;
  try {
    payload = decode(carrier(body.png_base64), body.passphrase);
  } catch (error) {
    await recordAudit(ctx, ctx.principal.tenantId, { action: 'steg.decode', resource, outcome: 'failure' });
    throw error;
  }
  await recordAudit(ctx, ctx.principal.tenantId, { action: 'steg.decode', resource, detail: { bytes: payload.length } });
  const text = payload.toString('utf8');
  return { payload: Buffer.from(text, 'utf8').equals(payload) ? text : null, payload_base64: payload.toString('base64') };
}
