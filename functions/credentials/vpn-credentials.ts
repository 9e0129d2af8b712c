import { collectionHandlers } from '../../lib/credentials/handlers.js';
import { vpnCredential } from '../../lib/credentials/types/basic.js';

/** /api/v1/vpn-credentials: the vpn credential collection's five routes, typed by its spec. */
export const { list, create, get, update, remove } = collectionHandlers(vpnCredential);
