import * as z from 'zod/v4';
import { Description } from '../schemas.js';

/** Request bodies of the SAML stores (docs/api.md, "Federation"). */

const MAX_XML = 256 * 1024;
/** XML as a string, or base64 of it (what an HTTP-POST binding carries). */
const XmlText = z
  .string()
  .min(1)
  .max(Math.ceil((MAX_XML * 4) / 3) + 4);

export const CreateMetadataBody = z.strictObject({
  xml: XmlText,
  description: Description.optional(),
});
export type CreateMetadataBody = z.infer<typeof CreateMetadataBody>;

export const UpdateMetadataBody = z
  .strictObject({ xml: XmlText.optional(), description: Description.optional() })
  .refine((b) => Object.keys(b).length > 0, { message: 'at least one field to update is required' });
export type UpdateMetadataBody = z.infer<typeof UpdateMetadataBody>;

export const StoreAssertionBody = z.strictObject({
  /** A signed saml:Assertion, or a samlp:Response carrying exactly one; XML or base64. */
  assertion: XmlText,
});
export type StoreAssertionBody = z.infer<typeof StoreAssertionBody>;

export const CheckReplayBody = z.strictObject({
  assertion_id: z.string().min(1).max(256),
  issuer: z.string().min(1).max(1024),
  not_on_or_after: z.iso.datetime({ offset: true }),
});
export type CheckReplayBody = z.infer<typeof CheckReplayBody>;

export const MAX_XML_BYTES = MAX_XML;
