import { ConfigureBody, MockTemplate, Sandbox, TemplateParams } from '../../lib/diagnostics/schemas.js';
import { HttpError, created, defineHandler, ok } from '../../lib/http/index.js';
import { configureSandbox, requireMockRoutes } from '../../lib/mock/sandbox.js';
import { templateOf, templateTypes } from '../../lib/mock/templates.js';

/** GET /api/v1/mock/templates/{type}: a valid example body for the type's create route. */
export const templates = defineHandler({
  summary: 'Get an example create body for a resource type',
  description: 'Only when mock routes are enabled (otherwise 404 `route_not_found`).',
  responses: { 200: MockTemplate },
  errors: ['not_found', 'route_not_found'],
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
  summary: 'Seed the sandbox account with fixtures',
  description:
    'Creates a `sandbox` container and `sandbox-secret-1..n`; idempotent (fixtures already there are listed under `existing`). Only when mock routes are enabled.',
  responses: { 201: Sandbox },
  errors: ['route_not_found'],
  body: ConfigureBody,
  async handler({ ctx, body }) {
    requireMockRoutes();
    return created({ sandbox: await configureSandbox(ctx, body) });
  },
});
