import { WRITE_SCOPE } from '../../lib/documents/access.js';
import { uploadDocument } from '../../lib/documents/upload.js';
import { UploadBody, UploadedDocument } from '../../lib/documents/schemas.js';
import { created, defineHandler } from '../../lib/http/index.js';

/** POST /api/v1/documents: a PDF (base64), validated by opening it, stored sealed in S3. */
export const create = defineHandler({
  summary: 'Upload a protected document',
  description: 'A PDF as base64 (password-protected ones with their password), validated by opening it, sealed and stored. Only application/pdf.',
  responses: { 201: UploadedDocument },
  errors: ['not_a_pdf', 'invalid_pdf', 'pdf_password_required', 'pdf_wrong_password', 'bad_request', 'insufficient_scope'],
  // before the body is validated: a caller without it learns nothing of the body's shape
  scopes: [WRITE_SCOPE],
  body: UploadBody,
  async handler({ ctx, body }) {
    return created({ document: await uploadDocument(ctx, body) });
  },
});
