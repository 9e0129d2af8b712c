import { collectionHandlers } from '../../lib/credentials/handlers.js';
import { ldapBindCredential } from '../../lib/credentials/types/basic.js';

/** /api/v1/ldap-bind-credentials: the ldap bind credential collection's five routes, typed by its spec. */
export const { list, create, get, update, remove } = collectionHandlers(ldapBindCredential);
