import { PNG } from 'pngjs';

/**
 * A carrier picture drawn in code (no binary fixture): a sky gradient, a sun, two hills and
 * a little grain, like a photograph's sample noise, as an 8-bit RGBA PNG.
 */
export function carrierPng(width = 320, height = 200): Buffer {
  const png = new PNG({ width, height });
  let seed = 7;
  const grain = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return (seed % 7) - 3;
  };
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const t = y / height;
      let rgb = [90 + 100 * t, 150 + 70 * t, 235 - 20 * t];
      if ((x - width * 0.75) ** 2 + (y - height * 0.25) ** 2 < (height * 0.12) ** 2) rgb = [250, 215, 80];
      const hill1 = height * 0.65 + Math.sin(x / 40) * 18;
      const hill2 = height * 0.8 + Math.cos(x / 55) * 12;
      if (y > hill1) rgb = [60, 140 - (y - hill1) * 0.4, 60];
      if (y > hill2) rgb = [40, 105, 45];
      const o = (y * width + x) * 4;
      for (let c = 0; c < 3; c++) png.data[o + c] = Math.max(0, Math.min(255, Math.round(rgb[c]! + grain())));
      png.data[o + 3] = 255;
    }
  }
  return PNG.sync.write(png);
}
