import { listProfiles, profileView, putProfile } from '../../lib/agents/admin.js';
import { created, defineHandler, ok } from '../../lib/http/index.js';
import { listPage } from '../../lib/schemas.js';
import { IdParams, ListQuery, ProfileAnswer, ProfileBody, ProfilePage } from '../../lib/agents/schemas.js';

export const list = defineHandler({
  summary: 'List agent profiles',
  responses: { 200: ProfilePage },
  errors: ['bad_request'],
  query: ListQuery,
  async handler({ ctx, query }) {
    const page = await listProfiles(ctx, query);
    return ok(listPage('profiles', page.profiles.map(profileView), page.nextCursor));
  },
});

/** Creates (201) or replaces (200) the profile with this client-chosen UUID. */
export const put = defineHandler({
  summary: 'Create or replace an agent profile',
  description:
    'The profile with this client-chosen UUID: 201 when created, 200 when replaced. Each grant names one existing resource of the account by id (no patterns); aliases are unique per profile.',
  responses: { 200: ProfileAnswer, 201: ProfileAnswer },
  errors: ['stale_etag'],
  params: IdParams,
  body: ProfileBody,
  async handler({ ctx, params, body }) {
    const { profile, created: isNew } = await putProfile(ctx, params.id, body);
    return isNew ? created({ profile: profileView(profile) }) : ok({ profile: profileView(profile) });
  },
});
