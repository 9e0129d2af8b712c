import { defineHandler, ok } from '../../lib/http/index.js';
import { SettingsBody } from '../../lib/settings/settings.js';
import { updateSettings } from './settings-service.js';

/** PUT /api/v1/settings (settings:write): strict schema, unknown keys → 400; returns the effective settings. */
export const update = defineHandler({
  body: SettingsBody,
  async handler({ ctx, body }) {
    return ok({ settings: await updateSettings(ctx, body) });
  },
});
