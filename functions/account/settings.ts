import { defineHandler, ok } from '../../lib/http/index.js';
import * as z from 'zod/v4';
import { AccountSettingsSchema } from '../../lib/account/schemas.js';
import { SettingsBody } from '../../lib/settings/settings.js';
import { updateSettings } from '../../lib/account/settings.js';

/** PUT /api/v1/settings (settings:write): strict schema, unknown keys → 400; returns the effective settings. */
export const update = defineHandler({
  summary: 'Update account settings',
  description:
    'Each setting present replaces that setting (`webhooks` as a whole); null resets it to its default. Answers the effective settings. An API-key IP allow-list that would lock out the calling key is refused.',
  responses: { 200: z.object({ settings: AccountSettingsSchema }) },
  errors: ['would_lock_out', 'settings_conflict'],
  body: SettingsBody,
  async handler({ ctx, body }) {
    return ok({ settings: await updateSettings(ctx, body) });
  },
});
