import { listProfiles, profileView, putProfile } from '../../lib/agents/admin.js';
import { created, defineHandler, ok } from '../../lib/http/index.js';
import { listPage } from '../../lib/schemas.js';
import { IdParams, ListQuery, ProfileBody } from './schemas.js';

export const list = defineHandler({
  query: ListQuery,
  async handler({ ctx, query }) {
    const page = await listProfiles(ctx, query);
    return ok(listPage('profiles', page.profiles.map(profileView), page.nextCursor));
  },
});

/** Creates (201) or replaces (200) the profile with this client-chosen UUID. */
export const put = defineHandler({
  params: IdParams,
  body: ProfileBody,
  async handler({ ctx, params, body }) {
    const { profile, created: isNew } = await putProfile(ctx, params.id, body);
    return isNew ? created({ profile: profileView(profile) }) : ok({ profile: profileView(profile) });
  },
});
