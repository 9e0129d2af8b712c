import * as z from 'zod/v4';
import { defineHandler, notFound, protocol } from '../../lib/http/index.js';
import { challengeAnswer } from '../../lib/certificates/acme.js';

/**
 * GET /.well-known/acme-challenge/{token} (public): the key authorization of a pending
 * http-01 challenge, as the ACME server expects it (RFC 8555 §8.3): the bare text, with
 * Content-Type text/plain. The route's wire is `text` (lib/routes.ts): the shared handler
 * stack (request id, logging, validation, errors) sends the body as it is; errors stay JSON
 * envelopes.
 */
const Params = z.strictObject({ token: z.string().regex(/^[A-Za-z0-9_-]{16,256}$/, 'an ACME token (base64url)') });

export const challenge = defineHandler({
  summary: 'Answer an ACME http-01 challenge',
  description: 'The key authorization of a pending http-01 challenge as plain text (RFC 8555 §8.3), for the ACME server to fetch.',
  responses: { 200: z.string().describe('`<token>.<account key thumbprint>`.') },
  errors: ['not_found'],
  params: Params,
  async handler({ params }) {
    const answer = await challengeAnswer(params.token);
    if (!answer) throw notFound('challenge');
    return protocol(answer, { 'Content-Type': 'text/plain; charset=utf-8' });
  },
});
