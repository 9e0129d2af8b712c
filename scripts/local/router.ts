import { ROUTES, type Route } from '../../lib/routes.js';

/**
 * Path-template matching as API Gateway does it: a literal segment beats a `{param}`
 * segment at the same level, and the match backtracks when a more specific branch fails.
 */
interface Node {
  literals: Map<string, Node>;
  param?: { name: string; node: Node };
  routes: Map<string, Route>;
}

const node = (): Node => ({ literals: new Map(), routes: new Map() });
const segments = (path: string) => path.split('/').filter((s) => s.length > 0);

export type Match =
  | { kind: 'route'; route: Route; params: Record<string, string> }
  | { kind: 'method_not_allowed'; allow: string[] }
  | { kind: 'not_found' };

export function buildRouter(routes: readonly Route[] = ROUTES) {
  const root = node();
  for (const route of routes) {
    let at = root;
    for (const seg of segments(route.path)) {
      const param = /^\{(\w+)\}$/.exec(seg);
      if (param) {
        at.param ??= { name: param[1]!, node: node() };
        if (at.param.name !== param[1]) throw new Error(`conflicting parameter names at ${route.path}`);
        at = at.param.node;
      } else {
        if (!at.literals.has(seg)) at.literals.set(seg, node());
        at = at.literals.get(seg)!;
      }
    }
    at.routes.set(route.method, route);
  }

  const find = (at: Node, segs: string[], i: number, params: Record<string, string>): { node: Node; params: Record<string, string> } | undefined => {
    if (i === segs.length) return at.routes.size > 0 ? { node: at, params } : undefined;
    const seg = segs[i]!;
    const literal = at.literals.get(seg);
    const viaLiteral = literal && find(literal, segs, i + 1, params);
    if (viaLiteral) return viaLiteral;
    if (at.param) return find(at.param.node, segs, i + 1, { ...params, [at.param.name]: seg });
    return undefined;
  };

  return (method: string, path: string): Match => {
    let segs: string[];
    try {
      segs = segments(path).map((s) => decodeURIComponent(s));
    } catch {
      return { kind: 'not_found' };
    }
    const found = find(root, segs, 0, {});
    if (!found) return { kind: 'not_found' };
    const route = found.node.routes.get(method.toUpperCase());
    if (!route) return { kind: 'method_not_allowed', allow: [...found.node.routes.keys()].sort() };
    return { kind: 'route', route, params: found.params };
  };
}
