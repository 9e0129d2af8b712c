import { defineHandler, ok } from '../../lib/http/index.js';
import {
  DecodeBody,
  DetectBody,
  decode as decodeInput,
  detect as detectInput,
  EncodeBody,
  encode as encodeInput,
} from '../../lib/tools/transform/service.js';
import { Decoded, Detected, Encoded } from '../../lib/tools/schemas.js';

/** Encodings, JWT decoding (unverified) and secret detection (lib/tools/transform). */
export const encode = defineHandler({
  summary: 'Encode bytes',
  description: 'Base64, base64url, hex, base32, URL, PEM or quoted-printable.',
  responses: { 200: Encoded },
  errors: ['bad_request'],
  body: EncodeBody,
  async handler({ body }) {
    return ok(encodeInput(body));
  },
});

export const decode = defineHandler({
  summary: 'Decode text, or a JWT without verifying it',
  description: 'A JWT is decoded but NOT verified: do not trust its claims.',
  responses: { 200: Decoded },
  errors: ['bad_request'],
  body: DecodeBody,
  async handler({ body }) {
    return ok(decodeInput(body));
  },
});

export const detect = defineHandler({
  summary: 'Detect encodings and secrets in text',
  description: 'The encodings the input decodes as, and likely secrets in it (redacted previews).',
  responses: { 200: Detected },
  body: DetectBody,
  async handler({ body }) {
    return ok(detectInput(body.input));
  },
});
