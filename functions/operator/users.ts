import * as z from 'zod/v4';
import { Email } from '../../lib/account/schemas.js';
import { defineHandler, notFound, ok } from '../../lib/http/index.js';
import { Uuid } from '../../lib/schemas.js';
import { getTenant } from '../../lib/store/tenants.js';
import { resetPassword as resetPassword_ } from '../../lib/users/passwords.js';
import { listUsers, userView } from '../../lib/users/users.js';
import { PasswordReset, TenantParams, UserList } from '../../lib/operator/schemas.js';

/** The users of an account: the admin named at creation and those who signed in (never a verifier). */
export const list = defineHandler({
  summary: 'List an account’s users',
  description: 'The admin named at creation and those who signed in (never a password verifier).',
  responses: { 200: UserList },
  errors: ['not_found'],
  params: TenantParams,
  async handler({ params }) {
    if (!(await getTenant(params.id))) throw notFound('tenant');
    const users = await listUsers(params.id);
    return ok({ users: users.map(userView), total: users.length });
  },
});

const ResetBody = z.strictObject({ tenant_id: Uuid, email: Email });

/** Removes the user's password verifier and returns a single-use reset token, once (audited in the user's account). */
export const resetPassword = defineHandler({
  summary: 'Reset a user’s password',
  description:
    'Removes the user’s password and ends their open sessions; the single-use reset token is in this response only. Audited in the user’s account.',
  responses: { 200: PasswordReset },
  errors: ['not_found'],
  body: ResetBody,
  async handler({ ctx, body }) {
    return ok({ tenant_id: body.tenant_id, email: body.email, ...(await resetPassword_(ctx, body)) });
  },
});
