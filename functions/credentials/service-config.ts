import { collectionHandlers } from '../../lib/credentials/handlers.js';
import { serviceConfig } from '../../lib/credentials/types/integrations.js';

/** /api/v1/service-config: the service configuration collection's five routes, typed by its spec. */
export const { list, create, get, update, remove } = collectionHandlers(serviceConfig);
