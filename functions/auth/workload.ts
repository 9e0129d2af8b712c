import * as z from 'zod/v4';
import { defineHandler, protocol } from '../../lib/http/index.js';
import { exchange } from '../../lib/oauth/workload.js';
import { requestFacts } from '../../lib/users/sessions.js';

const ExchangeBody = z.looseObject({
  grant_type: z.string().min(1).max(256),
  subject_token: z.string().min(1).max(16_384),
  subject_token_type: z.string().min(1).max(256),
  requested_token_type: z.string().max(256).optional(),
  audience: z.string().max(512).optional(),
  scope: z.string().max(4096).optional(),
});

const ExchangeAnswer = z.strictObject({
  access_token: z.string(),
  issued_token_type: z.literal('urn:ietf:params:oauth:token-type:access_token'),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int(),
  scope: z.string(),
});

/** RFC 8693 token exchange for workloads (lib/oauth/workload.ts). */
export const token = defineHandler({
  summary: 'Exchange a workload JWT for an access token (RFC 8693)',
  description:
    'grant_type=urn:ietf:params:oauth:grant-type:token-exchange, subject_token = a JWT of an issuer whose keys are in one of the account\u2019s JWK sets, its aud `urn:secrets-api:account:<account id>`, subject_token_type urn:ietf:params:oauth:token-type:jwt (or id_token). The first workload binding of that JWK set matching the token\u2019s sub and claims gives the scopes (or the requested subset, `scope`) and the lifetime. An expired or unverifiable token, a wrong audience, an unknown issuer or no matching binding is `invalid_request` (RFC 8693 §2.2.2); a scope beyond the binding `invalid_scope`; an `audience` parameter other than the subject token\u2019s account `invalid_target`.',
  responses: { 200: ExchangeAnswer },
  errors: ['invalid_request', 'invalid_scope', 'invalid_target', 'unsupported_grant_type'],
  body: ExchangeBody,
  async handler(input) {
    return protocol(await exchange(input.body, requestFacts(input)));
  },
});
