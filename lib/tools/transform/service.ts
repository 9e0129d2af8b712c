import * as z from 'zod/v4';
import { exactlyOneOf } from '../../schemas.js';
import { badRequest } from '../../core/errors.js';
import { asText, decodeJwt, decodeText, encodeBytes, FORMATS } from './codecs.js';
import { detectFormats, findSecrets } from './detect.js';

/** Request bodies and answers of /api/v1/transform/encode, /decode and /detect (stateless: nothing is stored or logged). */
const Input = z.string().max(512 * 1024);

const EncodeBodyFields = z.strictObject({
  format: z.enum(FORMATS),
  /** Text to encode (as UTF-8), or `input_base64` for bytes (e.g. DER for `pem`). */
  input: Input.optional(),
  input_base64: z.base64().max(700_000).optional(),
  /** The PEM label (RFC 7468), e.g. CERTIFICATE, PUBLIC KEY; only for `pem`. */
  label: z
    .string()
    .regex(/^[A-Z0-9]+(?: [A-Z0-9]+)*$/, 'upper-case words, e.g. CERTIFICATE')
    .max(64)
    .optional(),
});
export const EncodeBody = exactlyOneOf(EncodeBodyFields, ['input', 'input_base64'], 'send exactly one of input or input_base64', 'input');
export type EncodeBody = z.infer<typeof EncodeBody>;

export const DecodeBody = z.strictObject({ format: z.enum(FORMATS), input: Input.min(1) });
export type DecodeBody = z.infer<typeof DecodeBody>;

export const DetectBody = z.strictObject({ input: Input.min(1) });

export function encode(body: EncodeBody) {
  if (body.format === 'jwt') {
    throw badRequest('jwt is decode-only here: a JWT is made by signing, which these tools do not do', [
      { path: 'body.format', message: 'decode only' },
    ]);
  }
  if (body.label !== undefined && body.format !== 'pem') throw badRequest('label applies to pem only', [{ path: 'body.label', message: 'pem only' }]);
  const bytes = body.input !== undefined ? Buffer.from(body.input, 'utf8') : Buffer.from(body.input_base64!, 'base64');
  return { format: body.format, output: encodeBytes(body.format, bytes, body.label ?? 'CERTIFICATE') };
}

export function decode(body: DecodeBody) {
  if (body.format === 'jwt') {
    return {
      format: 'jwt' as const,
      ...decodeJwt(body.input),
      verified: false,
      warning: 'NOT VERIFIED: the signature was not checked; do not trust these claims until a verifier with the issuer key accepts the token',
    };
  }
  const out = decodeText(body.format, body.input);
  return {
    format: body.format,
    output: asText(out.bytes),
    output_base64: out.bytes.toString('base64'),
    bytes: out.bytes.length,
    ...(out.label ? { label: out.label } : {}),
  };
}

export function detect(input: string) {
  return { formats: detectFormats(input), findings: findSecrets(input) };
}
