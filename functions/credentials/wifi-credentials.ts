import { collectionHandlers } from '../../lib/credentials/handlers.js';
import { wifiCredential } from '../../lib/credentials/types/basic.js';

/** /api/v1/wifi-credentials: the wifi credential collection's five routes, typed by its spec. */
export const { list, create, get, update, remove } = collectionHandlers(wifiCredential);
