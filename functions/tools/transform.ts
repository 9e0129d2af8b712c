import { defineHandler, ok } from '../../lib/http/index.js';
import {
  DecodeBody,
  DetectBody,
  decode as decodeInput,
  detect as detectInput,
  EncodeBody,
  encode as encodeInput,
} from '../../lib/tools/transform/service.js';

/** Encodings, JWT decoding (unverified) and secret detection (lib/tools/transform). */
export const encode = defineHandler({
  body: EncodeBody,
  async handler({ body }) {
    return ok(encodeInput(body));
  },
});

export const decode = defineHandler({
  body: DecodeBody,
  async handler({ body }) {
    return ok(decodeInput(body));
  },
});

export const detect = defineHandler({
  body: DetectBody,
  async handler({ body }) {
    return ok(detectInput(body.input));
  },
});
