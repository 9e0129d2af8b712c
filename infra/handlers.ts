import type { Route } from '../lib/routes.js';

/**
 * How a route maps onto the bundle (scripts/build.ts) and onto its Lambda function: the
 * handler column `<folder>/<module>.<export>` names `functions/<folder>/<module>.ts`, which
 * the build emits as `<folder>/<module>.mjs`; Lambda's handler string is the column itself
 * (the Node.js runtime resolves `secrets/secrets.list` to `secrets/secrets.mjs`, export
 * `list`). Routes not built yet (handler null) run `functions/not-implemented.ts` `handler`.
 */
export const NOT_IMPLEMENTED = 'not-implemented.handler';

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

/** Every module the functions of these routes load (always including not-implemented). */
export function handlerModules(routes: readonly Route[]): string[] {
  return [...new Set([lambdaEntry({ handler: null } as Route).module, ...routes.map((r) => lambdaEntry(r).module)])].sort();
}

/**
 * The code asset of a handler module (infra/bundle.ts): a directory of its own under the
 * build output, named after the module (`credentials/collection` -> `credentials.collection`).
 */
export function assetId(module: string): string {
  return module.split('/').join('.');
}
