import { collectionHandlers } from '../../lib/credentials/handlers.js';
import { ntlm } from '../../lib/credentials/types/basic.js';

/** /api/v1/ntlm: the ntlm collection's five routes, typed by its spec. */
export const { list, create, get, update, remove } = collectionHandlers(ntlm);
