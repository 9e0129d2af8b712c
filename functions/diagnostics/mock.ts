import { ConfigureBody, TemplateParams } from '../../lib/diagnostics/schemas.js';
import { HttpError, created, defineHandler, ok } from '../../lib/http/index.js';
import { configureSandbox, requireMockRoutes } from '../../lib/mock/sandbox.js';
import { templateOf, templateTypes } from '../../lib/mock/templates.js';

/** GET /api/v1/mock/templates/{type}: a valid example body for the type's create route. */
export const templates = defineHandler({
  params: TemplateParams,
  async handler({ params }) {
    requireMockRoutes();
    const template = templateOf(params.type);
    if (!template) throw new HttpError(404, 'not_found', `no resource type "${params.type}"; types: ${templateTypes().join(', ')}`);
    return ok({ template });
  },
});

/** POST /api/v1/mock/configure: seeds the caller's sandbox account with deterministic fixtures. */
export const configure = defineHandler({
  body: ConfigureBody,
  async handler({ ctx, body }) {
    requireMockRoutes();
    return created({ sandbox: await configureSandbox(ctx, body) });
  },
});
