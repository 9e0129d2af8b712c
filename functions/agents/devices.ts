import { createDevice, deviceView, listDevices, revokeDevice, REVOCATION_NOTE } from '../../lib/agents/admin.js';
import { created, defineHandler, ok } from '../../lib/http/index.js';
import { listPage } from '../../lib/schemas.js';
import { CreateDeviceBody, IdParams, ListQuery } from './schemas.js';

export const list = defineHandler({
  query: ListQuery,
  async handler({ ctx, query }) {
    const page = await listDevices(ctx, query);
    return ok(listPage('devices', page.devices.map(deviceView), page.nextCursor));
  },
});

/** Enrolment with account credentials: the device's public key, registered directly. */
export const create = defineHandler({
  body: CreateDeviceBody,
  async handler({ ctx, body }) {
    return created({ device: deviceView(await createDevice(ctx, body)) });
  },
});

export const revoke = defineHandler({
  params: IdParams,
  async handler({ ctx, params }) {
    return ok({ device: deviceView(await revokeDevice(ctx, params.id)), note: REVOCATION_NOTE });
  },
});
