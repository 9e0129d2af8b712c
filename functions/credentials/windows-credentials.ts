import { collectionHandlers } from '../../lib/credentials/handlers.js';
import { windowsCredential } from '../../lib/credentials/types/basic.js';

/** /api/v1/windows-credentials: the windows credential collection's five routes, typed by its spec. */
export const { list, create, get, update, remove } = collectionHandlers(windowsCredential);
