import * as z from 'zod/v4';

/* Responses of the unauthenticated service routes. */

export const Welcome = z.object({
  service: z.string().describe('The service name.'),
  version: z.string().describe('The deployed version.'),
  api: z.literal('/api/v1').describe('The base path of the API.'),
  health: z.literal('/health'),
  ready: z.literal('/ready'),
});

export const Health = z.object({ status: z.literal('ok') });

export const Ready = z.object({
  status: z.literal('ready'),
  checks: z.object({ table: z.literal('ok'), key_provider: z.literal('ok') }).describe('Each dependency probed.'),
});
