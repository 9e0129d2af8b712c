import { uploadDocument } from '../../lib/documents/upload.js';
import { UploadBody } from '../../lib/documents/schemas.js';
import { created, defineHandler } from '../../lib/http/index.js';

/** POST /api/v1/documents: a PDF (base64), validated by opening it, stored sealed in S3. */
export const create = defineHandler({
  body: UploadBody,
  async handler({ ctx, body }) {
    return created({ document: await uploadDocument(ctx, body) });
  },
});
