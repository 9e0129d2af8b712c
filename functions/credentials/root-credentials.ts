import { collectionHandlers } from '../../lib/credentials/handlers.js';
import { rootCredential } from '../../lib/credentials/types/basic.js';

/** /api/v1/root-credentials: the root credential collection's five routes, typed by its spec. */
export const { list, create, get, update, remove } = collectionHandlers(rootCredential);
