import { collectionHandlers } from '../../lib/credentials/handlers.js';
import { socialCredential } from '../../lib/credentials/types/basic.js';

/** /api/v1/social-credentials: the social credential collection's five routes, typed by its spec. */
export const { list, create, get, update, remove } = collectionHandlers(socialCredential);
