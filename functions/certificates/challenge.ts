import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import * as z from 'zod/v4';
import { defineHandler, notFound, ok, type LambdaHandler } from '../../lib/http/index.js';
import { challengeAnswer } from './acme.js';

/**
 * GET /.well-known/acme-challenge/{token} (public): the key authorization of a pending
 * http-01 challenge, as the ACME server expects it (RFC 8555 §8.3): the bare text, with
 * Content-Type text/plain. The shared handler stack answers JSON envelopes; this route
 * runs the same stack (request id, logging, validation, errors) and then unwraps the
 * success body into the plain text the validator compares. Errors stay JSON envelopes.
 */
const Params = z.strictObject({ token: z.string().regex(/^[A-Za-z0-9_-]{16,256}$/, 'an ACME token (base64url)') });

const inner = defineHandler({
  params: Params,
  async handler({ params }) {
    const answer = await challengeAnswer(params.token);
    if (!answer) throw notFound('challenge');
    return ok({ key_authorization: answer });
  },
});

export const challenge: LambdaHandler = async (event: APIGatewayProxyEvent, context: Context): Promise<APIGatewayProxyResult> => {
  const result = await inner(event, context);
  if (result.statusCode !== 200) return result;
  const { data } = JSON.parse(result.body) as { data: { key_authorization: string } };
  return { ...result, headers: { ...result.headers, 'Content-Type': 'text/plain; charset=utf-8' }, body: data.key_authorization };
};
