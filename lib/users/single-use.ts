/** Spends a single-use item (a sign-in challenge, an OIDC state): the users store's conditional delete (lib/users/store.ts). */
export { peek, spend } from './store.js';
