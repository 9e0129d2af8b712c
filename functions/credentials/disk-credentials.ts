import { collectionHandlers } from '../../lib/credentials/handlers.js';
import { diskCredential } from '../../lib/credentials/types/basic.js';

/** /api/v1/disk-credentials: the disk credential collection's five routes, typed by its spec. */
export const { list, create, get, update, remove } = collectionHandlers(diskCredential);
