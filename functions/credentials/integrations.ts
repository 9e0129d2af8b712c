import * as z from 'zod/v4';
import { collectionHandlers } from '../../lib/credentials/handlers.js';
import { availableProviders, catalogueEntry, integration, ProviderList } from '../../lib/credentials/types/integrations.js';
import { defineHandler, ok } from '../../lib/http/index.js';

/** /api/v1/integrations: the collection's five routes, typed by its spec. */
export const { list, create, get, update, remove } = collectionHandlers(integration);

/** GET /api/v1/integration-providers: the providers an integration may name, with their fields. */
export const providers = defineHandler({
  summary: 'List integration providers',
  description: 'The providers an integration may name, with the JSON Schema of their fields and which are secret; `category` filters.',
  responses: { 200: ProviderList },
  query: z.strictObject({ category: z.enum(['database', 'directory', 'storage', 'payment', 'hsm', 'email', 'cloud']).optional() }),
  async handler({ query }) {
    const found = availableProviders()
      .filter((p) => !query.category || p.category === query.category)
      .map(catalogueEntry);
    return ok({ providers: found, total: found.length });
  },
});
