/** Whether a sign-in session still admits its access tokens (lib/auth/store.ts reads it). */
export { sessionState } from './store.js';
