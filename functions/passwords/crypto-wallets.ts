import { collectionHandlers } from '../../lib/credentials/handlers.js';
import { cryptoWallet } from '../../lib/credentials/types/crypto-wallet.js';

/** /api/v1/crypto-wallets: the crypto wallet collection's five routes, typed by its spec. */
export const { list, create, get, update, remove } = collectionHandlers(cryptoWallet);
