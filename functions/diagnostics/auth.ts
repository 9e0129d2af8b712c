import * as z from 'zod/v4';
import { diagnoseAuth } from '../../lib/authn/diagnose.js';
import { AuthDiagnosis } from '../../lib/diagnostics/schemas.js';
import { defineHandler, ok } from '../../lib/http/index.js';

const DiagnoseQuery = z.strictObject({
  /** A route of the route table, e.g. `GET /api/v1/secrets/{name}`: would the credential pass its checks? */
  route: z.string().min(3).max(200).optional(),
});

/** Why the presented credential is or is not accepted (never the credential itself). */
export const explain = defineHandler({
  summary: 'Explain whether a credential is accepted',
  description:
    'Says why the presented Authorization header is or is not accepted, and with `route` whether it would pass that route’s scope and operator checks. Never echoes the credential.',
  responses: { 200: AuthDiagnosis },
  errors: ['bad_request'],
  query: DiagnoseQuery,
  async handler({ query, headers }) {
    return ok(await diagnoseAuth(headers, query.route));
  },
});
