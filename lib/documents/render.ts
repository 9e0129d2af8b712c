import * as mupdf from 'mupdf';

/**
 * The page renderer: MuPDF (the `mupdf` npm package, its WebAssembly build). Only the page
 * route's module imports this file, so only that function carries the renderer and its
 * `mupdf-wasm.wasm` (copied beside the bundle by infra/bundle.ts RUNTIME_FILES).
 *
 * A page is drawn at `scale` (1 = 72 dpi), bounded so that neither side exceeds
 * MAX_RENDER_PIXELS, on white, then the watermark is drawn over it: the viewer's identity and
 * the time, in translucent red lines across the page, so a screenshot names its viewer.
 */
export const MAX_RENDER_PIXELS = 3000;

interface RenderRequest {
  readonly pdf: Uint8Array;
  readonly password?: string | undefined;
  /** 1-based page number. */
  readonly page: number;
  readonly scale: number;
  /** Lines of the watermark; none draws the page alone. */
  readonly watermark: readonly string[];
}

interface Rendered {
  readonly png: Uint8Array;
  readonly width: number;
  readonly height: number;
  /** The scale used (the one asked for, or lower to stay within MAX_RENDER_PIXELS). */
  readonly scale: number;
  readonly page_width_pt: number;
  readonly page_height_pt: number;
}

export class PageOutOfRange extends Error {
  constructor(readonly pages: number) {
    super(`the document has ${pages} page(s)`);
  }
}

export function renderPage(req: RenderRequest): Rendered {
  const doc = mupdf.Document.openDocument(req.pdf, 'application/pdf');
  try {
    // the stored password opened it at upload; a document that still refuses fails below (loadPage throws)
    if (doc.needsPassword()) doc.authenticatePassword(req.password ?? '');
    const pages = doc.countPages();
    if (req.page > pages) throw new PageOutOfRange(pages);
    const page = doc.loadPage(req.page - 1);
    try {
      const [x0, y0, x1, y1] = page.getBounds();
      const [w, h] = [x1 - x0, y1 - y0];
      const scale = Math.min(req.scale, MAX_RENDER_PIXELS / Math.max(w, h));
      const ctm = mupdf.Matrix.scale(scale, scale);
      const width = Math.round(w * scale);
      const height = Math.round(h * scale);
      const pixmap = new mupdf.Pixmap(mupdf.ColorSpace.DeviceRGB, [0, 0, width, height], false);
      try {
        pixmap.clear(255);
        const device = new mupdf.DrawDevice(mupdf.Matrix.identity, pixmap);
        try {
          page.run(device, mupdf.Matrix.concat(mupdf.Matrix.translate(-x0, -y0), ctm));
          if (req.watermark.length > 0) drawWatermark(device, width, height, req.watermark);
          device.close();
        } finally {
          device.destroy();
        }
        return { png: pixmap.asPNG(), width, height, scale, page_width_pt: w, page_height_pt: h };
      } finally {
        pixmap.destroy();
      }
    } finally {
      page.destroy();
    }
  } finally {
    doc.destroy();
  }
}

/** Repeated diagonal lines of text, 45 degrees, over the whole page. */
function drawWatermark(device: mupdf.Device, width: number, height: number, lines: readonly string[]): void {
  const font = new mupdf.Font('Helvetica');
  const size = Math.max(10, Math.round(Math.min(width, height) / 28));
  const text = new mupdf.Text();
  const step = size * 2.2;
  const diagonal = Math.hypot(width, height);
  let row = 0;
  for (let y = -diagonal / 2; y < diagonal / 2; y += step, row++) {
    const line = lines[row % lines.length]!;
    // glyph space: y up, size in pixels; a line every `step` pixels along the rotated axis
    const trm: mupdf.Matrix = [size, 0, 0, -size, -diagonal / 2, y];
    text.showString(font, trm, `${line}   ${line}   ${line}`);
  }
  const at = mupdf.Matrix.concat(mupdf.Matrix.rotate(-45), mupdf.Matrix.translate(width / 2, height / 2));
  device.fillText(text, at, mupdf.ColorSpace.DeviceRGB, [0.85, 0.1, 0.1], 0.35);
  text.destroy();
  font.destroy();
}
