import { defineHandler, ok } from '../../lib/http/index.js';
import { DecodeBody, EncodeBody, stegDecode, stegEncode } from '../../lib/tools/steg/service.js';
import { StegDecoded, StegEncoded } from '../../lib/tools/schemas.js';

/** PNG steganography (lib/tools/steg): a passphrase-sealed payload hidden in a carrier image. */
export const encode = defineHandler({
  summary: 'Hide a payload in a PNG image',
  description: 'The payload is sealed with the passphrase and hidden in the carrier image’s pixels.',
  responses: { 200: StegEncoded },
  errors: ['bad_request'],
  body: EncodeBody,
  async handler({ ctx, body }) {
    return ok(await stegEncode(ctx, body));
  },
});

export const decode = defineHandler({
  summary: 'Recover a payload hidden in a PNG image',
  responses: { 200: StegDecoded },
  errors: ['bad_request', 'steg_decode_failed'],
  body: DecodeBody,
  async handler({ ctx, body }) {
    return ok(await stegDecode(ctx, body));
  },
});
