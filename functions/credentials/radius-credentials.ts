import { collectionHandlers } from '../../lib/credentials/handlers.js';
import { radiusCredential } from '../../lib/credentials/types/basic.js';

/** /api/v1/radius-credentials: the radius credential collection's five routes, typed by its spec. */
export const { list, create, get, update, remove } = collectionHandlers(radiusCredential);
