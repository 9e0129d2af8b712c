import { PNG } from 'pngjs';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, canary, errorCode, newAccount, type TestAccount } from '../helpers/api.js';
import { carrierPng } from '../helpers/carrier.js';

/**
 * PNG steganography through HTTP: the round trip, a wrong passphrase (no output), capacity
 * and format errors, and images re-encoded by another tool (sharp/libvips): a lossless PNG
 * re-encoding still decodes, lossy ones (JPEG, resize) fail cleanly with 400.
 */
let acct: TestAccount;
let key: string;
const pass = canary('steg-pass');
const carrier = carrierPng();
const b64 = (b: Buffer) => b.toString('base64');
const encode = (body: Record<string, unknown>, k = key) => api('POST', '/api/v1/steg/encode', { key: k, body });
const decode = (png: Buffer | string, passphrase = pass, k = key) =>
  api('POST', '/api/v1/steg/decode', { key: k, body: { png_base64: typeof png === 'string' ? png : b64(png), passphrase } });

beforeAll(async () => {
  acct = await newAccount('tools-steg');
  key = await acct.key(['secrets:read']);
});

describe('steganography', () => {
  const payload = canary('steg-payload');
  let stego: Buffer;

  it('hides a payload that comes back with the passphrase; the pixels change by at most 1', async () => {
    const res = await encode({ png_base64: b64(carrier), payload, passphrase: pass });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ width: 320, height: 200, bytes: payload.length });
    stego = Buffer.from(res.body.data.png_base64, 'base64');
    const [a, b] = [PNG.sync.read(carrier).data, PNG.sync.read(stego).data];
    let changed = 0;
    for (let i = 0; i < a.length; i++) {
      expect(Math.abs(a[i]! - b[i]!)).toBeLessThanOrEqual(1);
      if (a[i] !== b[i]) changed++;
    }
    expect(changed).toBeGreaterThan(50); // the salt and the scattered payload bits
    expect(stego.toString('latin1')).not.toContain(payload);
    const out = await decode(stego);
    expect(out.status, out.text).toBe(200);
    expect(out.body.data.payload).toBe(payload);
  });

  it('a wrong passphrase fails without output', async () => {
    const res = await decode(stego, canary('wrong'));
    expect(res.status).toBe(400);
    expect(errorCode(res)).toBe('steg_decode_failed');
    expect(res.body.data).toBeUndefined();
    expect(res.text).not.toContain(payload);
    const plain = await decode(carrier);
    expect(errorCode(plain)).toBe('steg_decode_failed');
  });

  it('bytes payloads, and a PNG re-encoded losslessly by sharp still decodes', async () => {
    const bytes = Buffer.from([0, 1, 2, 250, 255]);
    const res = await encode({ png_base64: b64(carrier), payload_base64: b64(bytes), passphrase: pass });
    const img = Buffer.from(res.body.data.png_base64, 'base64');
    const lossless = await sharp(img).png({ compressionLevel: 9, palette: false }).toBuffer();
    expect(lossless.equals(img)).toBe(false);
    const out = await decode(lossless);
    expect(out.status, out.text).toBe(200);
    expect(out.body.data).toMatchObject({ payload: null, payload_base64: b64(bytes) });
  });

  it('a PNG re-encoded lossily by sharp (JPEG round trip, resize) fails cleanly', async () => {
    const viaJpeg = await sharp(await sharp(stego).jpeg({ quality: 95 }).toBuffer())
      .png()
      .toBuffer();
    const resized = await sharp(stego).resize(300).png().toBuffer();
    for (const img of [viaJpeg, resized]) {
      const res = await decode(img);
      expect(res.status).toBe(400);
      expect(errorCode(res)).toBe('steg_decode_failed');
    }
  });

  it('400 on capacity and format errors', async () => {
    const tiny = carrierPng(8, 8);
    const over = await encode({ png_base64: b64(tiny), payload: 'x'.repeat(100), passphrase: pass });
    expect(over.status).toBe(400);
    expect(over.body.error).toContain('carries at most');
    const notPng = await encode({ png_base64: b64(Buffer.from('GIF89a not a png at all')), payload: 'x', passphrase: pass });
    expect(notPng.body.details[0].path).toBe('body.png_base64');
    const broken = Buffer.concat([carrier.subarray(0, 40), Buffer.alloc(20)]);
    const bad = await encode({ png_base64: b64(broken), payload: 'x', passphrase: pass });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('not a readable PNG');
    expect(errorCode(await decode(carrierPng(4, 4)))).toBe('steg_decode_failed');
    for (const body of [
      { png_base64: b64(carrier), passphrase: pass },
      { png_base64: b64(carrier), payload: 'x', passphrase: 'short' },
      { png_base64: '***', payload: 'x', passphrase: pass },
    ]) {
      const res = await encode(body);
      expect(res.status).toBe(400);
      expect(errorCode(res)).toBe('validation_failed');
    }
  });

  it('401 and 403', async () => {
    expect((await encode({ png_base64: b64(carrier), payload: 'x', passphrase: pass }, '')).status).toBe(401);
    const other = await acct.key(['transform:use']);
    expect(errorCode(await decode(stego, pass, other))).toBe('insufficient_scope');
  });
});
