/** Spends a single-use item (a sign-in challenge, an OIDC state): the users store's conditional delete (lib/users/store.ts). */
export { spend } from './store.js';
