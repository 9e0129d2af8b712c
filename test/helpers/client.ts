import { type ApiClient, createApiClient } from '../../client/index.js';
import { baseUrl } from './api.js';

/** The typed client (client/) against the local gateway, authenticated with this key (none: anonymous). */
export function client(key?: string | null): ApiClient {
  return createApiClient({ baseUrl: baseUrl(), token: key ?? null, fetch: (request) => fetch(request) });
}
