import { defineHandler, ok } from '../../lib/http/index.js';
import { getHistorySettings, getHistoryVersion, listHistory, putHistorySettings } from './history-service.js';
import { HistorySettingsBody, TypeIdParams, TypeIdVersionParams } from '../../lib/sharing/schemas.js';

/** GET /api/v1/{type}/{id}/history — the kept versions, newest first (metadata only). */
export const list = defineHandler({
  params: TypeIdParams,
  async handler({ ctx, params }) {
    return ok(await listHistory(ctx, params.type, params.id));
  },
});

/** GET /api/v1/{type}/{id}/history/{version} — one version; its value only with the type's read scope. */
export const get = defineHandler({
  params: TypeIdVersionParams,
  async handler({ ctx, params }) {
    return ok({ version: await getHistoryVersion(ctx, params.type, params.id, params.version) });
  },
});

export const getSettings = defineHandler({
  params: TypeIdParams,
  async handler({ ctx, params }) {
    return ok({ settings: await getHistorySettings(ctx, params.type, params.id) });
  },
});

export const putSettings = defineHandler({
  params: TypeIdParams,
  body: HistorySettingsBody,
  async handler({ ctx, params, body }) {
    return ok({ settings: await putHistorySettings(ctx, params.type, params.id, body.keep_versions) });
  },
});
