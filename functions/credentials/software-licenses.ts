import { collectionHandlers } from '../../lib/credentials/handlers.js';
import { softwareLicense } from '../../lib/credentials/types/basic.js';

/** /api/v1/software-licenses: the software license collection's five routes, typed by its spec. */
export const { list, create, get, update, remove } = collectionHandlers(softwareLicense);
