import { PDFDocument } from '@cantoo/pdf-lib';
import { badRequest, HttpError } from '../core/errors.js';

/**
 * Upload validation: the bytes must open as a PDF (pdf-lib's maintained fork with the
 * standard security handler, so a password-protected PDF is opened with its password). The
 * renderer (mupdf, lib/documents/render.ts) is not loaded here: only the page route carries it.
 */
interface PdfFacts {
  readonly pages: number;
  /** Encrypted with a user password (needs one to open). */
  readonly password_protected: boolean;
}

const notPdf = () => new HttpError(415, 'not_a_pdf', 'the document is not a PDF (no %PDF- header): upload a PDF file');
const invalid = (why: string) => badRequest(`the document is not a readable PDF (${why}): upload an intact PDF`, undefined, 'invalid_pdf');

export async function inspectPdf(bytes: Uint8Array, password: string | undefined): Promise<PdfFacts> {
  if (!Buffer.from(bytes.subarray(0, 1024)).includes('%PDF-')) throw notPdf();
  let probe: PDFDocument;
  try {
    probe = await PDFDocument.load(bytes, { ignoreEncryption: true, updateMetadata: false, throwOnInvalidObject: true });
  } catch {
    throw invalid('its structure does not parse');
  }
  if (!probe.isEncrypted) {
    if (password !== undefined) {
      throw badRequest('the PDF is not password-protected: omit password', [{ path: 'body.password', message: 'not needed' }]);
    }
    return { pages: pagesOf(probe), password_protected: false };
  }
  // an empty user password opens owner-restricted PDFs without asking
  if (password === undefined && (await opens(bytes, ''))) return { pages: pagesOf(probe), password_protected: false };
  if (password === undefined) {
    throw badRequest(
      'the PDF is password-protected: send its password in "password"',
      [{ path: 'body.password', message: 'required' }],
      'pdf_password_required',
    );
  }
  const doc = await opens(bytes, password);
  if (!doc) throw badRequest('the password does not open the PDF', [{ path: 'body.password', message: 'wrong password' }], 'pdf_wrong_password');
  return { pages: pagesOf(doc), password_protected: true };
}

async function opens(bytes: Uint8Array, password: string): Promise<PDFDocument | undefined> {
  try {
    return await PDFDocument.load(bytes, { password, updateMetadata: false });
  } catch {
    return undefined;
  }
}

function pagesOf(doc: PDFDocument): number {
  let pages = 0;
  try {
    pages = doc.getPageCount();
  } catch {
    throw invalid('its page tree does not parse');
  }
  if (pages < 1) throw invalid('it has no pages');
  return pages;
}
