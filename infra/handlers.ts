import type { Route } from '../lib/routes.js';

/**
 * How a route maps onto the bundle (scripts/build.ts) and onto its Lambda function: the
 * handler column `<folder>/<module>.<export>` names `functions/<folder>/<module>.ts`, which
 * the build emits as `<folder>/<module>.mjs`; Lambda's handler string is the column itself
 * (the Node.js runtime resolves `secrets/secrets.list` to `secrets/secrets.mjs`, export
 * `list`). Routes not built yet (handler null) run `functions/not-implemented.ts` `handler`.
 */
export const NOT_IMPLEMENTED = 'not-implemented.handler';

/**
 * The CORS preflight function (functions/public/cors.ts): one for the whole API, the
 * integration of every OPTIONS method when context corsOrigins is set (infra/api-stack.ts).
 * Always built, like not-implemented, so the bundle does not depend on the context.
 */
export const CORS_PREFLIGHT = 'public/cors.preflight';

export interface LambdaEntry {
  /** Module path under functions/, without extension (`secrets/secrets`). */
  readonly module: string;
  /** The export the function calls (`list`). */
  readonly exportName: string;
  /** Lambda's handler setting (`secrets/secrets.list`). */
  readonly handler: string;
}

export function lambdaEntry(route: Route): LambdaEntry {
  const handler = route.handler ?? NOT_IMPLEMENTED;
  const dot = handler.lastIndexOf('.');
  if (dot <= 0 || dot === handler.length - 1) throw new Error(`${route.key}: handler "${handler}" is not <module>.<export>`);
  return { module: handler.slice(0, dot), exportName: handler.slice(dot + 1), handler };
}

/** Every module the functions of these routes load (always including not-implemented and the CORS preflight). */
export function handlerModules(routes: readonly Route[]): string[] {
  const always = [lambdaEntry({ handler: null } as Route).module, lambdaEntry({ handler: CORS_PREFLIGHT } as Route).module];
  return [...new Set([...always, ...routes.map((r) => lambdaEntry(r).module)])].sort();
}

/**
 * The code asset of a handler module (infra/bundle.ts): a directory of its own under the
 * build output, named after the module (`credentials/collection` -> `credentials.collection`).
 */
export function assetId(module: string): string {
  return module.split('/').join('.');
}

/** The manifest infra/bundle.ts writes beside the code assets (read by infra/code.ts and the benchmarks). */
export const MANIFEST = 'build-manifest.json';

export interface BuiltAsset {
  /** The handler module (`credentials/collection`). */
  readonly module: string;
  /** The asset directory, relative to the output directory. */
  readonly dir: string;
  /** The module file inside the asset directory (`credentials/collection.mjs`). */
  readonly file: string;
  readonly exports: readonly string[];
  /** Files beside the module that a bundled package reads at run time (infra/bundle.ts RUNTIME_FILES), relative to the asset directory. */
  readonly runtimeFiles?: readonly string[];
  /** Bytes of the module (without its source map). */
  readonly bytes: number;
}

export interface BuildManifest {
  readonly sourceMaps: boolean;
  readonly assets: Readonly<Record<string, BuiltAsset>>;
  /** Imports left to the runtime: Node built-ins and the native addon, with their kind. */
  readonly externals: readonly string[];
}
