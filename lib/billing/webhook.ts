import { badRequest, notFound, serviceUnavailable, unauthorized } from '../core/errors.js';
import { configuredProvider, loadSecrets, verifyEvent } from './provider.js';
import { handleEvent } from './subscriptions.js';

/**
 * POST /webhooks/{payment_provider}: the provider's events. Only the deployment's configured
 * provider has an endpoint (another name is 404); the Stripe-Signature header is verified on
 * the raw body with the webhook signing secret from the secret store, within the tolerance;
 * then the event is applied once (lib/billing/subscriptions.ts handleEvent). The answer is
 * metadata only: no event payload is echoed, logged or stored.
 */
export async function receiveEvent(providerParam: string, rawBody: string | null, signature: string | undefined) {
  const name = configuredProvider();
  if (!name || providerParam !== name) throw notFound('payment provider');
  if (!signature) throw unauthorized('the Stripe-Signature header is missing');
  let secrets: Awaited<ReturnType<typeof loadSecrets>>;
  try {
    secrets = await loadSecrets();
  } catch (error) {
    throw serviceUnavailable('the payment provider is not configured', error);
  }
  // the route's schema parsed the body as an event; the signature covers its raw bytes
  const event = verifyEvent(rawBody ?? '', signature, secrets);
  if (!event) {
    throw badRequest(
      'the event signature does not verify or its timestamp is outside the 5-minute tolerance',
      undefined,
      'webhook_signature_invalid',
    );
  }
  return { received: true, ...(await handleEvent(name, event, secrets)) };
}
