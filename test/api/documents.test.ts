import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PDFDocument, PDFName, PDFString, StandardFonts, rgb } from '@cantoo/pdf-lib';
import * as mupdf from 'mupdf';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { renderPage } from '../../lib/documents/render.js';
import { api, auditLogs, canary, errorCode, newAccount, type TestAccount } from '../helpers/api.js';

/**
 * Protected documents: PDFs made here (pdf-lib; one encrypted with MuPDF) uploaded, listed,
 * downloaded and rendered to watermarked PNGs; expiring grants to users of other accounts;
 * per-document download and render controls; every use audited; the PDF's text never in
 * plaintext in the local S3 engine's files (nor, by the suite's leak scan, in the table or logs).
 */
const MISSING = '00000000-0000-7000-8000-000000000000';
const sentence = `The launch code is ${canary('pdf-text')} and must stay secret.`;
const pdfPassword = canary('pdf-password');
let owner: TestAccount;
let grantee: TestAccount;
let stranger: TestAccount;
let readKey: string;
let writeKey: string;
let noScopeKey: string;
let granteeKey: string;
let strangerKey: string;
let plainPdf: Uint8Array;
let protectedPdf: Uint8Array;
let plainId: string;

async function makePdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const [w, h] of [
    [300, 200],
    [400, 300],
  ] as const) {
    const page = doc.addPage([w, h]);
    page.drawRectangle({ x: 10, y: 10, width: w / 3, height: h / 4, color: rgb(0.1, 0.3, 0.8) });
    page.drawText(sentence.slice(0, 40), { x: 20, y: h - 40, size: 10, font });
  }
  // a literal string in the catalogue: the plaintext PDF carries the sentence as readable bytes
  doc.catalog.set(PDFName.of('Canary'), PDFString.of(sentence));
  return doc.save({ useObjectStreams: false });
}

const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
const upload = (key: string | null, body: Record<string, unknown>) => api('POST', '/api/v1/documents', { key, body: { name: 'doc', ...body } });
const inHours = (h: number) => new Date(Date.now() + h * 3600_000).toISOString();
/** RGB samples of a PNG (decoded with MuPDF). */
function pixels(png: Uint8Array): { w: number; h: number; rgb: Uint8Array } {
  const pix = new mupdf.Image(png).toPixmap();
  const n = pix.getNumberOfComponents();
  const all = pix.getPixels();
  const rgbOut = new Uint8Array(pix.getWidth() * pix.getHeight() * 3);
  for (let i = 0, j = 0; i < all.length; i += n, j += 3) rgbOut.set(all.subarray(i, i + 3), j);
  return { w: pix.getWidth(), h: pix.getHeight(), rgb: rgbOut };
}

beforeAll(async () => {
  [owner, grantee, stranger] = await Promise.all([newAccount('docs'), newAccount('docs-grantee'), newAccount('docs-stranger')]);
  [readKey, writeKey, noScopeKey, granteeKey, strangerKey] = await Promise.all([
    owner.key(['documents:read']),
    owner.key(['documents:read', 'documents:write']),
    owner.key(['secrets:read']),
    grantee.key(['secrets:read']),
    stranger.key(['documents:read']),
  ]);
  plainPdf = await makePdf();
  expect(Buffer.from(plainPdf).includes(sentence)).toBe(true);
  const opened = mupdf.Document.openDocument(plainPdf, 'application/pdf') as mupdf.PDFDocument;
  protectedPdf = opened.saveToBuffer(`encrypt=aes-256,user-password=${pdfPassword},owner-password=${pdfPassword}o`).asUint8Array().slice();
  expect(Buffer.from(protectedPdf).includes(sentence)).toBe(false);
  const made = await upload(writeKey, { name: 'plain.pdf', content_base64: b64(plainPdf) });
  expect(made.status, made.text).toBe(201);
  plainId = made.body.data.document.id;
});

describe('upload', () => {
  it('stores a PDF: metadata answered, listed, read, downloaded byte for byte', async () => {
    const got = await api('GET', `/api/v1/documents/${plainId}`, { key: readKey });
    expect(got.status, got.text).toBe(200);
    expect(got.body.data.document).toMatchObject({
      id: plainId,
      name: 'plain.pdf',
      content_type: 'application/pdf',
      size_bytes: plainPdf.length,
      pages: 2,
      password_protected: false,
      allow_download: true,
      allow_render: true,
      access: { via: 'owner', allow_download: true, allow_render: true },
    });
    expect(JSON.stringify(got.body)).not.toContain('object_key');
    const list = await api('GET', '/api/v1/documents?limit=50', { key: readKey });
    expect(list.status).toBe(200);
    expect(list.body.data.documents.map((d: { id: string }) => d.id)).toContain(plainId);
    const dl = await api('GET', `/api/v1/documents/${plainId}/download`, { key: readKey });
    expect(dl.status, dl.text).toBe(200);
    expect(dl.body.data).toMatchObject({ content_type: 'application/pdf', encoding: 'base64' });
    expect(Buffer.from(dl.body.data.content, 'base64').equals(Buffer.from(plainPdf))).toBe(true);
  });

  it('a password-protected PDF needs its password, and then downloads as uploaded and renders', async () => {
    const none = await upload(writeKey, { content_base64: b64(protectedPdf) });
    expect(none.status).toBe(400);
    expect(errorCode(none)).toBe('pdf_password_required');
    const wrong = await upload(writeKey, { content_base64: b64(protectedPdf), password: 'not-it' });
    expect(errorCode(wrong)).toBe('pdf_wrong_password');
    const made = await upload(writeKey, { name: 'locked.pdf', content_base64: b64(protectedPdf), password: pdfPassword });
    expect(made.status, made.text).toBe(201);
    expect(made.body.data.document).toMatchObject({ password_protected: true, pages: 2 });
    expect(made.text).not.toContain(pdfPassword);
    const id = made.body.data.document.id;
    const dl = await api('GET', `/api/v1/documents/${id}/download`, { key: readKey });
    expect(Buffer.from(dl.body.data.content, 'base64').equals(Buffer.from(protectedPdf))).toBe(true);
    const page = await api('GET', `/api/v1/documents/${id}/pages/2?scale=1`, { key: readKey });
    expect(page.status, page.text).toBe(200);
    expect(page.body.data).toMatchObject({ width: 400, height: 300, page: 2, pages: 2 });
  });

  it('refuses what is not a PDF (415), a corrupt PDF (400), an oversized one (413) and bad fields (400)', async () => {
    const png = await upload(writeKey, { content_base64: Buffer.from('\x89PNG\r\n\x1a\n not a pdf').toString('base64') });
    expect(png.status).toBe(415);
    expect(errorCode(png)).toBe('not_a_pdf');
    const typed = await upload(writeKey, { content_base64: b64(plainPdf), content_type: 'image/png' });
    expect(typed.status).toBe(415);
    const corrupt = await upload(writeKey, { content_base64: Buffer.from(`%PDF-1.7\n${'x'.repeat(200)}`).toString('base64') });
    expect(corrupt.status).toBe(400);
    expect(errorCode(corrupt)).toBe('invalid_pdf');
    // over the limit by its base64 length, and by one decoded byte within the same base64 length
    for (const extraBytes of [3, 1]) {
      const big = await upload(writeKey, { content_base64: Buffer.alloc(2 * 1024 * 1024 + extraBytes, 0x25).toString('base64') });
      expect(big.status).toBe(413);
      expect(errorCode(big)).toBe('payload_too_large');
    }
    const notB64 = await upload(writeKey, { content_base64: '***' });
    expect(errorCode(notB64)).toBe('validation_failed');
    const extra = await upload(writeKey, { content_base64: b64(plainPdf), password: 'x' });
    expect(extra.status).toBe(400);
    const noName = await api('POST', '/api/v1/documents', { key: writeKey, body: { content_base64: b64(plainPdf) } });
    expect(errorCode(noName)).toBe('validation_failed');
  });

  it('a PDF restricted by an owner password only opens without one', async () => {
    const opened = mupdf.Document.openDocument(plainPdf, 'application/pdf') as mupdf.PDFDocument;
    const ownerOnly = opened
      .saveToBuffer(`encrypt=aes-128,owner-password=${canary('owner-pw')}`)
      .asUint8Array()
      .slice();
    const made = await upload(writeKey, { name: 'restricted.pdf', content_base64: b64(ownerOnly) });
    expect(made.status, made.text).toBe(201);
    expect(made.body.data.document).toMatchObject({ password_protected: false, pages: 2 });
  });

  it('lists a page at a time with a cursor', async () => {
    const first = await api('GET', '/api/v1/documents?limit=1', { key: readKey });
    expect(first.status).toBe(200);
    expect(first.body.data.documents).toHaveLength(1);
    expect(first.body.data.next_cursor).toEqual(expect.any(String));
    const next = await api('GET', `/api/v1/documents?limit=1&cursor=${encodeURIComponent(first.body.data.next_cursor)}`, { key: readKey });
    expect(next.status, next.text).toBe(200);
    expect(next.body.data.documents[0].id).not.toBe(first.body.data.documents[0].id);
  });

  it('401 without credentials, 403 without documents:write', async () => {
    expect((await upload(null, { content_base64: b64(plainPdf) })).status).toBe(401);
    const ro = await upload(readKey, { content_base64: b64(plainPdf) });
    expect(ro.status).toBe(403);
    expect(errorCode(ro)).toBe('insufficient_scope');
  });
});

describe('page previews', () => {
  it('a page renders at page size x scale, not blank, watermarked where the unwatermarked render is not; audited', async () => {
    const res = await api('GET', `/api/v1/documents/${plainId}/pages/1?scale=2`, { key: readKey });
    expect(res.status, res.text).toBe(200);
    const data = res.body.data;
    expect(data).toMatchObject({
      page: 1,
      pages: 2,
      width: 600,
      height: 400,
      scale: 2,
      content_type: 'image/png',
      page_width_pt: 300,
      page_height_pt: 200,
    });
    const png = Buffer.from(data.content, 'base64');
    expect(png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(true);
    // kept for a person to look at, beside the runtimes' logs (replaced by each run)
    mkdirSync('build/test-logs', { recursive: true });
    writeFileSync('build/test-logs/document-page.png', png);
    const served = pixels(png);
    expect([served.w, served.h]).toEqual([600, 400]);
    const bare = pixels(renderPage({ pdf: plainPdf, page: 1, scale: 2, watermark: [] }).png);
    expect([bare.w, bare.h]).toEqual([600, 400]);
    // not blank: the blue rectangle is there
    const blue = (p: typeof served, i: number) => p.rgb[i + 2]! > 150 && p.rgb[i]! < 80;
    let blues = 0;
    let redOnlyServed = 0;
    let redBare = 0;
    let differ = 0;
    for (let i = 0; i < served.rgb.length; i += 3) {
      if (blue(served, i)) blues++;
      const red = (p: typeof served) => p.rgb[i]! > 200 && p.rgb[i + 1]! < 200 && p.rgb[i]! - p.rgb[i + 1]! > 40;
      if (red(served)) redOnlyServed++;
      if (red(bare)) redBare++;
      if (
        Math.abs(served.rgb[i]! - bare.rgb[i]!) + Math.abs(served.rgb[i + 1]! - bare.rgb[i + 1]!) + Math.abs(served.rgb[i + 2]! - bare.rgb[i + 2]!) >
        30
      )
        differ++;
    }
    expect(blues).toBeGreaterThan(1000);
    expect(redBare).toBe(0);
    expect(redOnlyServed).toBeGreaterThan(2000);
    expect(differ).toBeGreaterThan(2000);
    expect(data.watermark.viewer).toBe(owner.adminEmail);

    // a read-only route: its entry is written by the audit writer (lib/audit/queue.ts)
    const logs = await auditLogs(owner.adminKey, `action=document.view&resource_id=${plainId}`, (entries) =>
      entries.some((e) => e.id === data.audit_id),
    );
    expect(logs.find((e) => e.id === data.audit_id)).toMatchObject({
      action: 'document.view',
      outcome: 'success',
      actor: { user: owner.adminEmail },
    });
  });

  it('page out of range is 404; page 0, a bad scale or id is 400; 401; 403 without documents:read; another account 404', async () => {
    const out = await api('GET', `/api/v1/documents/${plainId}/pages/3`, { key: readKey });
    expect(out.status).toBe(404);
    expect((await api('GET', `/api/v1/documents/${plainId}/pages/0`, { key: readKey })).status).toBe(400);
    expect((await api('GET', `/api/v1/documents/${plainId}/pages/1?scale=50`, { key: readKey })).status).toBe(400);
    expect((await api('GET', '/api/v1/documents/nope/pages/1', { key: readKey })).status).toBe(400);
    expect((await api('GET', `/api/v1/documents/${plainId}/pages/1`)).status).toBe(401);
    expect(errorCode(await api('GET', `/api/v1/documents/${plainId}/pages/1`, { key: noScopeKey }))).toBe('insufficient_scope');
    expect((await api('GET', `/api/v1/documents/${plainId}/pages/1`, { key: strangerKey })).status).toBe(404);
    expect((await api('GET', `/api/v1/documents/${MISSING}/pages/1`, { key: readKey })).status).toBe(404);
  });
});

describe('controls and grants', () => {
  it('download and rendering are refused when the document disables them (audited as denied)', async () => {
    const made = await upload(writeKey, { name: 'view-only.pdf', content_base64: b64(plainPdf), allow_download: false, allow_render: false });
    expect(made.status, made.text).toBe(201);
    const id = made.body.data.document.id;
    const dl = await api('GET', `/api/v1/documents/${id}/download`, { key: readKey });
    expect(dl.status).toBe(403);
    expect(errorCode(dl)).toBe('download_disabled');
    const pg = await api('GET', `/api/v1/documents/${id}/pages/1`, { key: readKey });
    expect(pg.status).toBe(403);
    expect(errorCode(pg)).toBe('render_disabled');
    const logs = await auditLogs(owner.adminKey, `resource_id=${id}&outcome=denied`, (entries) => entries.length >= 2);
    expect(logs.map((e) => e.action).sort()).toEqual(['document.download', 'document.view']);
  });

  it('a grantee of another account reads, renders (its own identity in the watermark) but not downloads; revocation applies at once', async () => {
    const made = await api('POST', `/api/v1/documents/${plainId}/grants`, {
      key: writeKey,
      body: { grantee_email: grantee.adminEmail.toUpperCase(), expires_at: inHours(1), allow_render: true },
    });
    expect(made.status, made.text).toBe(201);
    const grant = made.body.data.grant;
    expect(grant).toMatchObject({ grantee_email: grantee.adminEmail, allow_download: false, allow_render: true, status: 'active' });
    const again = await api('POST', `/api/v1/documents/${plainId}/grants`, {
      key: writeKey,
      body: { grantee_email: grantee.adminEmail, expires_at: inHours(2) },
    });
    expect(again.status).toBe(409);

    const listed = await api('GET', `/api/v1/documents/${plainId}/grants`, { key: readKey });
    expect(listed.status).toBe(200);
    expect(listed.body.data.grants.map((g: { id: string }) => g.id)).toContain(grant.id);

    const got = await api('GET', `/api/v1/documents/${plainId}`, { key: granteeKey });
    expect(got.status, got.text).toBe(200);
    expect(got.body.data.document.access).toMatchObject({ via: 'grant', grant_id: grant.id, allow_download: false, allow_render: true });
    const shared = await api('GET', '/api/v1/documents?shared=true', { key: granteeKey });
    expect(shared.body.data.documents.map((d: { id: string }) => d.id)).toContain(plainId);
    const dl = await api('GET', `/api/v1/documents/${plainId}/download`, { key: granteeKey });
    expect(errorCode(dl)).toBe('download_disabled');
    const page = await api('GET', `/api/v1/documents/${plainId}/pages/2`, { key: granteeKey });
    expect(page.status, page.text).toBe(200);
    expect(page.body.data.watermark.viewer).toBe(grantee.adminEmail);
    // the grantee's account cannot list the owner's grants; a stranger sees nothing
    expect((await api('GET', `/api/v1/documents/${plainId}/grants`, { key: grantee.adminKey })).status).toBe(404);
    expect((await api('GET', `/api/v1/documents/${plainId}`, { key: strangerKey })).status).toBe(404);

    const del = await api('DELETE', `/api/v1/documents/${plainId}/grants/${grant.id}`, { key: writeKey });
    expect(del.status, del.text).toBe(200);
    expect(del.body.data).toMatchObject({ revoked: true, grant: { id: grant.id } });
    expect((await api('GET', `/api/v1/documents/${plainId}`, { key: granteeKey })).status).toBe(404);
    expect((await api('GET', `/api/v1/documents/${plainId}/pages/1`, { key: granteeKey })).status).toBe(404);
    expect((await api('DELETE', `/api/v1/documents/${plainId}/grants/${grant.id}`, { key: writeKey })).status).toBe(404);
  });

  it('an expired grant is refused on the next request; a download grant downloads', async () => {
    const made = await api('POST', `/api/v1/documents/${plainId}/grants`, {
      key: writeKey,
      body: { grantee_email: stranger.adminEmail, expires_at: new Date(Date.now() + 3000).toISOString(), allow_download: true },
    });
    expect(made.status, made.text).toBe(201);
    const dl = await api('GET', `/api/v1/documents/${plainId}/download`, { key: strangerKey });
    expect(dl.status, dl.text).toBe(200);
    expect(Buffer.from(dl.body.data.content, 'base64').equals(Buffer.from(plainPdf))).toBe(true);
    await new Promise((r) => setTimeout(r, 3500));
    const late = await api('GET', `/api/v1/documents/${plainId}/download`, { key: strangerKey });
    expect(late.status).toBe(403);
    expect(errorCode(late)).toBe('grant_expired');
    const listed = await api('GET', `/api/v1/documents/${plainId}/grants`, { key: readKey });
    expect(listed.body.data.grants.find((g: { id: string }) => g.id === made.body.data.grant.id).status).toBe('expired');
    // an expired grant is replaced by a new one
    const renewed = await api('POST', `/api/v1/documents/${plainId}/grants`, {
      key: writeKey,
      body: { grantee_email: stranger.adminEmail, expires_at: inHours(1) },
    });
    expect(renewed.status, renewed.text).toBe(201);
    expect((await api('GET', `/api/v1/documents/${plainId}`, { key: strangerKey })).status).toBe(200);
    expect((await api('DELETE', `/api/v1/documents/${plainId}/grants/${renewed.body.data.grant.id}`, { key: writeKey })).status).toBe(200);
  });

  it('grant routes: 400, 401, 403, cross-account 404', async () => {
    const path = `/api/v1/documents/${plainId}/grants`;
    const body = { grantee_email: 'someone@example.test', expires_at: inHours(1) };
    expect((await api('POST', path, { key: writeKey, body: { ...body, expires_at: '2001-01-01T00:00:00Z' } })).status).toBe(400);
    expect((await api('POST', path, { key: writeKey, body: { ...body, grantee_email: 'nope' } })).status).toBe(400);
    expect((await api('POST', path, { key: writeKey, body: { ...body, grantee_email: owner.adminEmail } })).status).toBe(400);
    expect((await api('GET', '/api/v1/documents/nope/grants', { key: readKey })).status).toBe(400);
    expect((await api('DELETE', `${path}/nope`, { key: writeKey })).status).toBe(400);
    expect((await api('GET', path)).status).toBe(401);
    expect((await api('POST', path, { body })).status).toBe(401);
    expect((await api('DELETE', `${path}/${MISSING}`)).status).toBe(401);
    expect(errorCode(await api('GET', path, { key: noScopeKey }))).toBe('insufficient_scope');
    expect(errorCode(await api('POST', path, { key: readKey, body }))).toBe('insufficient_scope');
    expect(errorCode(await api('DELETE', `${path}/${MISSING}`, { key: readKey }))).toBe('insufficient_scope');
    expect((await api('GET', path, { key: strangerKey })).status).toBe(404);
    expect((await api('POST', path, { key: stranger.adminKey, body })).status).toBe(404);
    expect((await api('DELETE', `${path}/${MISSING}`, { key: stranger.adminKey })).status).toBe(404);
    expect((await api('DELETE', `${path}/${MISSING}`, { key: writeKey })).status).toBe(404);
  });
});

describe('grants of a suspended account', () => {
  it('lists grants newest first; a grantee loses access while the owner account is suspended', async () => {
    const own = await newAccount('docs-suspended');
    const made = await upload(own.adminKey, { name: 'suspendable.pdf', content_base64: b64(plainPdf) });
    expect(made.status, made.text).toBe(201);
    const id = made.body.data.document.id;
    const ids: string[] = [];
    for (const email of [grantee.adminEmail, stranger.adminEmail]) {
      const g = await api('POST', `/api/v1/documents/${id}/grants`, { key: own.adminKey, body: { grantee_email: email, expires_at: inHours(1) } });
      expect(g.status, g.text).toBe(201);
      ids.push(g.body.data.grant.id);
    }
    const listed = await api('GET', `/api/v1/documents/${id}/grants`, { key: own.adminKey });
    expect(listed.body.data.grants.map((g: { id: string }) => g.id)).toEqual([...ids].reverse());
    expect((await api('GET', `/api/v1/documents/${id}`, { key: granteeKey })).status).toBe(200);
    const root = inject('rootKey');
    expect((await api('PATCH', `/api/v1/admin/tenants/${own.tenantId}/suspend`, { key: root })).status).toBe(200);
    expect((await api('GET', `/api/v1/documents/${id}`, { key: granteeKey })).status).toBe(404);
    expect((await api('PATCH', `/api/v1/admin/tenants/${own.tenantId}/activate`, { key: root })).status).toBe(200);
    expect((await api('GET', `/api/v1/documents/${id}`, { key: granteeKey })).status).toBe(200);
  });
});

describe('read routes: 400, 401, 403, cross-account 404', () => {
  it('list, get and download', async () => {
    expect((await api('GET', '/api/v1/documents?limit=0', { key: readKey })).status).toBe(400);
    expect((await api('GET', '/api/v1/documents')).status).toBe(401);
    expect(errorCode(await api('GET', '/api/v1/documents', { key: noScopeKey }))).toBe('insufficient_scope');
    const strangers = await api('GET', '/api/v1/documents', { key: strangerKey });
    expect(strangers.status).toBe(200);
    expect(strangers.body.data.documents.map((d: { id: string }) => d.id)).not.toContain(plainId);
    for (const suffix of ['', '/download']) {
      expect((await api('GET', `/api/v1/documents/nope${suffix}`, { key: readKey })).status).toBe(400);
      expect((await api('GET', `/api/v1/documents/${plainId}${suffix}`)).status).toBe(401);
      expect(errorCode(await api('GET', `/api/v1/documents/${plainId}${suffix}`, { key: noScopeKey }))).toBe('insufficient_scope');
      expect((await api('GET', `/api/v1/documents/${plainId}${suffix}`, { key: strangerKey })).status).toBe(404);
    }
  });
});

describe('storage', () => {
  it("the local S3 engine's files hold the documents sealed: no plaintext of the PDF, nor its password", () => {
    const root = join(inject('dataDir'), 's3');
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const p = join(dir, name);
        if (statSync(p).isDirectory()) walk(p);
        else files.push(p);
      }
    };
    walk(root);
    const objects = files.filter((f) => f.endsWith('.data') && f.includes(`${plainId}`));
    expect(objects.length).toBeGreaterThan(0);
    const needles = [sentence, sentence.slice(0, 40), pdfPassword, '%PDF-'].map((s) => Buffer.from(s));
    for (const f of files) {
      const bytes = readFileSync(f);
      for (const n of needles) expect(bytes.includes(n), `${f} holds ${n.toString()}`).toBe(false);
    }
  });
});
