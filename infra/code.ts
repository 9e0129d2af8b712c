import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { assetId, type BuildManifest, lambdaEntry, MANIFEST } from './handlers.js';

/**
 * The code asset of each handler module (infra/bundle.ts): one `lambda.Code` per module and
 * stack (an asset belongs to the stack that uses it; the same directory in two stacks has
 * the same hash and is uploaded once).
 */
export class CodeAssets {
  private readonly codes = new Map<string, lambda.Code>();

  constructor(private readonly assetDir: string) {}

  /** The asset holding the module of `handler` (`<module>.<export>`). */
  forHandler(handler: string): lambda.Code {
    const { module } = lambdaEntry({ handler } as Parameters<typeof lambdaEntry>[0]);
    let code = this.codes.get(module);
    if (!code) {
      const dir = join(this.assetDir, assetId(module));
      if (!existsSync(join(dir, `${module}.mjs`))) {
        throw new Error(`no code asset for functions/${module}.ts in ${this.assetDir} (run npm run build, or leave context assetDir unset)`);
      }
      code = lambda.Code.fromAsset(dir);
      this.codes.set(module, code);
    }
    return code;
  }
}

/** The manifest of a built asset directory, or undefined for a hand-made one (tests). */
export function readManifest(assetDir: string): BuildManifest | undefined {
  const file = join(assetDir, MANIFEST);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as BuildManifest) : undefined;
}
