import { defineHandler, ok } from '../../lib/http/index.js';
import { getHistorySettings, getHistoryVersion, listHistory, putHistorySettings } from '../../lib/sharing/history.js';
import {
  HistoryList,
  HistorySettings,
  HistorySettingsBody,
  HistorySettingsSet,
  HistoryVersion,
  TypeIdParams,
  TypeIdVersionParams,
} from '../../lib/sharing/schemas.js';

/** GET /api/v1/{type}/{id}/history — the kept versions, newest first (metadata only). */
export const list = defineHandler({
  summary: 'List a resource’s versions',
  description: 'The kept versions, newest first (metadata only).',
  responses: { 200: HistoryList },
  errors: ['not_found'],
  params: TypeIdParams,
  async handler({ ctx, params }) {
    return ok(await listHistory(ctx, params.type, params.id));
  },
});

/** GET /api/v1/{type}/{id}/history/{version} — one version; its value only with the type's read scope. */
export const get = defineHandler({
  summary: 'Get one version of a resource',
  description: 'Its value only with the type’s read scope; otherwise `value_redacted` with the missing scopes.',
  responses: { 200: HistoryVersion },
  errors: ['not_found'],
  params: TypeIdVersionParams,
  async handler({ ctx, params }) {
    return ok({ version: await getHistoryVersion(ctx, params.type, params.id, params.version) });
  },
});

export const getSettings = defineHandler({
  summary: 'Get a resource’s history settings',
  responses: { 200: HistorySettings },
  errors: ['not_found'],
  params: TypeIdParams,
  async handler({ ctx, params }) {
    return ok({ settings: await getHistorySettings(ctx, params.type, params.id) });
  },
});

export const putSettings = defineHandler({
  summary: 'Set how many versions a resource keeps',
  description:
    'Versions outside the new window are deleted at once (`pruned_versions`). Not a new version of the resource: its ETag does not change.',
  responses: { 200: HistorySettingsSet },
  errors: ['not_found', 'conflict'],
  params: TypeIdParams,
  body: HistorySettingsBody,
  async handler({ ctx, params, body }) {
    return ok({ settings: await putHistorySettings(ctx, params.type, params.id, body.keep_versions) });
  },
});
