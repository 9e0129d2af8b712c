import { defineHandler, ok } from '../../lib/http/index.js';
import { DecodeBody, EncodeBody, stegDecode, stegEncode } from '../../lib/tools/steg/service.js';

/** PNG steganography (lib/tools/steg): a passphrase-sealed payload hidden in a carrier image. */
export const encode = defineHandler({
  body: EncodeBody,
  async handler({ ctx, body }) {
    return ok(await stegEncode(ctx, body));
  },
});

export const decode = defineHandler({
  body: DecodeBody,
  async handler({ ctx, body }) {
    return ok(await stegDecode(ctx, body));
  },
});
