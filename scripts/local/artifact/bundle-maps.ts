/**
 * The bundles' source maps kept out of the code assets for the coverage of the
 * artifact's functions (read by scripts/coverage/artifact.ts).
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export interface RawMap {
  version: number;
  sources: string[];
  names: string[];
  mappings: string;
  sourceRoot?: string;
}

/**
 * Moves every source map out of the built code assets in `outDir` into `<dir>/bundles/`, each
 * beside a copy of its bundle, with the map's sources made absolute (they were relative to the
 * asset). Returns how many bundles it kept.
 */
export function keepBundleMaps(outDir: string, dir: string): number {
  let kept = 0;
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.mjs.map')) {
        const target = join(dir, 'bundles', relative(outDir, path));
        mkdirSync(dirname(target), { recursive: true });
        const map = JSON.parse(readFileSync(path, 'utf8')) as RawMap;
        const base = resolve(dirname(path), map.sourceRoot ?? '');
        map.sources = map.sources.map((s) => resolve(base, s));
        delete map.sourceRoot;
        writeFileSync(target, JSON.stringify(map));
        renameSync(path, `${path}.moved`);
        copyFileSync(path.slice(0, -'.map'.length), target.slice(0, -'.map'.length));
        kept++;
      }
    }
  };
  walk(outDir);
  // the renamed maps leave the assets too (renamed first so a failure above leaves nothing half-moved)
  const sweep = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) sweep(path);
      else if (entry.name.endsWith('.mjs.map.moved')) unlinkSync(path);
    }
  };
  sweep(outDir);
  return kept;
}
