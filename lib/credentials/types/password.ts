import * as z from 'zod/v4';
import { Base32Secret, HttpUrl, Secret, Text, Timestamp } from '../fields.js';
import type { TypeSpec } from '../model.js';

/**
 * Passwords (/api/v1/passwords): a log-in with its URL. Served by the generic collection
 * handlers; GET /{id} checks access in the handler: the type's read scope
 * (passwords:read), or the caller created it, or it was shared with them (access.ts).
 */
export const password: TypeSpec = {
  type: 'password',
  summary: 'A password with the user name and site it belongs to.',
  fields: z.strictObject({
    username: Text(256).optional(),
    password: Secret(4096),
    url: HttpUrl.optional(),
    notes: Secret(64 * 1024).optional(),
    totp_secret: Base32Secret.optional(),
    folder: Text(256).optional(),
    expires_at: Timestamp.optional(),
  }),
  secret: ['password', 'notes', 'totp_secret'],
  update: 'replace',
  updateSemantics:
    'PUT replaces the whole representation: public fields left out are cleared; password, notes and totp_secret left out keep their stored value.',
  expires: 'expires_at',
  ownerRead: true,
};
