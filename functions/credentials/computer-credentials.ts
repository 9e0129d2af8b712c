import { collectionHandlers } from '../../lib/credentials/handlers.js';
import { computerCredential } from '../../lib/credentials/types/basic.js';

/** /api/v1/computer-credentials: the computer credential collection's five routes, typed by its spec. */
export const { list, create, get, update, remove } = collectionHandlers(computerCredential);
