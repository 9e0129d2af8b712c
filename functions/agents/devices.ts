import { createDevice, deviceView, listDevices, revokeDevice, REVOCATION_NOTE } from '../../lib/agents/admin.js';
import { created, defineHandler, ok } from '../../lib/http/index.js';
import { listPage } from '../../lib/schemas.js';
import { CreateDeviceBody, DeviceAnswer, DevicePage, DeviceRevoked, IdParams, ListQuery } from '../../lib/agents/schemas.js';

export const list = defineHandler({
  summary: 'List agent devices',
  responses: { 200: DevicePage },
  errors: ['bad_request'],
  query: ListQuery,
  async handler({ ctx, query }) {
    const page = await listDevices(ctx, query);
    return ok(listPage('devices', page.devices.map(deviceView), page.nextCursor));
  },
});

/** Enrolment with account credentials: the device's public key, registered directly. */
export const create = defineHandler({
  summary: 'Register an agent device',
  description:
    'Enrols a device with account credentials: its public key (Ed25519 or ECDSA P-256, as a JWK or PEM SPKI) under a profile of the account. A private key is refused.',
  responses: { 201: DeviceAnswer },
  errors: ['quota_exceeded'],
  body: CreateDeviceBody,
  async handler({ ctx, body }) {
    return created({ device: deviceView(await createDevice(ctx, body)) });
  },
});

export const revoke = defineHandler({
  summary: 'Revoke an agent device',
  description:
    'The device’s key is deleted at once, so its next request fails. Values it already read and leases it obtained are not withdrawn (see `note`).',
  responses: { 200: DeviceRevoked },
  errors: ['not_found'],
  params: IdParams,
  async handler({ ctx, params }) {
    return ok({ device: deviceView(await revokeDevice(ctx, params.id)), note: REVOCATION_NOTE });
  },
});
