import { collectionHandlers } from '../../lib/credentials/handlers.js';
import { password } from '../../lib/credentials/types/password.js';

/** /api/v1/passwords: the password collection's five routes, typed by its spec. */
export const { list, create, get, update, remove } = collectionHandlers(password);
