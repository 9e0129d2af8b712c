import { config } from '../../lib/config.js';
import { preflightHandler } from '../../lib/http/cors.js';

/**
 * CORS preflights (OPTIONS on any path): one function for the whole API, integrated as the
 * OPTIONS method of every routed path when context `corsOrigins` is set (infra), and used by
 * the local gateway when CORS_ALLOWED_ORIGINS is. lib/http/cors.ts decides.
 */
export const preflight = preflightHandler(() => config().CORS_ALLOWED_ORIGINS);
