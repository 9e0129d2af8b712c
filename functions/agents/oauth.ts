import { completeEnrolment, decideAuthorization, pollToken, reviewAuthorization, startAuthorization } from '../../lib/agents/authorization.js';
import { publicKeyField, deviceView } from '../../lib/agents/admin.js';
import { DEVICE_CODE_GRANT, publicUrl } from '../../lib/auth/device-flow.js';
import { config } from '../../lib/config.js';
import { badRequest, created, defineHandler, ok, protocol } from '../../lib/http/index.js';
import {
  ApproveBody,
  AuthorizationDecision,
  AuthorizationReview,
  DeviceAuthorizationBody,
  DeviceAuthorizationResponse,
  DeviceTokenResponse,
  Enrolled,
  EnrollBody,
  ReviewBody,
  TokenBody,
} from '../../lib/agents/schemas.js';

/** Where the user goes to review the request. */
const verificationUri = (headers: Readonly<Record<string, string>>) => publicUrl(headers, config().PUBLIC_BASE_URL, '/api/v1/agents/oauth/review');

/** RFC 8628 §3.1–3.2: the device asks for authorization with its public key (wire `oauth`: the answer is the RFC's JSON object). */
export const device = defineHandler({
  summary: 'Start a device authorization (RFC 8628)',
  description:
    'The device asks for authorization with its public key; the answer is the RFC 8628 §3.2 object (no envelope). A user of the account reviews and approves the user code.',
  responses: { 200: DeviceAuthorizationResponse },
  body: DeviceAuthorizationBody,
  async handler({ body, headers }) {
    const key = await publicKeyField(body.public_key);
    const input = { name: body.name, key, profile_id: body.profile_id, client_id: body.client_id };
    return protocol(await startAuthorization(input, verificationUri(headers)));
  },
});

/** RFC 8628 §3.4–3.5: the device polls; once approved it gets a one-time enrolment token (a Bearer access token). */
export const token = defineHandler({
  summary: 'Poll for the device’s enrolment token (RFC 8628)',
  description:
    'RFC 8628 §3.4–3.5: `authorization_pending` and `slow_down` until a decision; once approved, a one-time enrolment token (the RFC 6749 token response, no envelope).',
  responses: { 200: DeviceTokenResponse },
  errors: ['invalid_grant', 'expired_token', 'access_denied', 'slow_down', 'authorization_pending', 'unsupported_grant_type'],
  body: TokenBody,
  async handler({ body }) {
    if (body.grant_type !== undefined && body.grant_type !== DEVICE_CODE_GRANT)
      throw badRequest(`this endpoint serves grant_type ${DEVICE_CODE_GRANT} only`, undefined, 'unsupported_grant_type');
    return protocol(await pollToken(body.device_code, body.client_id));
  },
});

/** The enrolment token: `Authorization: Bearer <token>` (what an OAuth client sends with its access token) or the body's `enrollment_token`. */
function enrolmentToken(body: { enrollment_token: string } | undefined, headers: Readonly<Record<string, string>>): string {
  const bearer = /^bearer +([A-Za-z0-9_-]{16,128})$/i.exec(headers.authorization?.trim() ?? '')?.[1];
  const token = body?.enrollment_token ?? bearer;
  if (!token) throw badRequest('send the access token of /api/v1/agent/oauth/token as Authorization: Bearer <token> or as enrollment_token');
  return token;
}

/** Binds the key: a new device of the approver's account; its id is the key id of its signatures. */
export const enroll = defineHandler({
  summary: 'Enrol the device with its enrolment token',
  description: 'The token (Authorization: Bearer, or `enrollment_token`) binds the key: a new device of the approver’s account, once.',
  responses: { 201: Enrolled },
  errors: ['invalid_grant', 'expired_token', 'tenant_suspended', 'bad_request'],
  body: EnrollBody,
  async handler({ body, headers, requestId }) {
    const { device, tenantId } = await completeEnrolment(enrolmentToken(body, headers), {
      requestId,
      sourceIp: null,
      userAgent: headers['user-agent'] ?? null,
    });
    return created({ device_id: device.id, key_id: device.id, tenant_id: tenantId, profile_id: device.profile_id, device: deviceView(device) });
  },
});

export const review = defineHandler({
  summary: 'Review a pending device authorization',
  description: 'What the device asked for (name, key fingerprint, requested profile), by the user code it shows.',
  responses: { 200: AuthorizationReview },
  errors: ['not_found'],
  body: ReviewBody,
  async handler({ ctx, body }) {
    return ok({ authorization: await reviewAuthorization(ctx, body.user_code) });
  },
});

export const approve = defineHandler({
  summary: 'Approve or deny a device authorization',
  responses: { 200: AuthorizationDecision },
  errors: ['not_found'],
  body: ApproveBody,
  async handler({ ctx, body }) {
    return ok({ authorization: await decideAuthorization(ctx, body) });
  },
});
