import { ROUTES, type Route } from '../../lib/routes.js';

/**
 * Path-template matching as API Gateway does it: a literal segment beats a `{param}`
 * segment at the same level, and the match backtracks when a more specific branch fails.
 */
interface Node {
  literals: Map<string, Node>;
  param?: { name: string; node: Node };
  /** A greedy `{name+}` parameter (API Gateway's): the rest of the path, one segment or more, always the last segment of a template. */
  greedy?: { name: string; routes: Map<string, Route> };
  routes: Map<string, Route>;
}

const node = (): Node => ({ literals: new Map(), routes: new Map() });
const segments = (path: string) => path.split('/').filter((s) => s.length > 0);

export type Match =
  | { kind: 'route'; route: Route; params: Record<string, string> }
  | { kind: 'method_not_allowed'; allow: string[] }
  | { kind: 'not_found'; suggestion?: string };

export function buildRouter(routes: readonly Route[] = ROUTES) {
  const root = node();
  for (const route of routes) {
    let at = root;
    let greedy = false;
    for (const seg of segments(route.path)) {
      if (greedy) throw new Error(`a greedy parameter must be the last segment: ${route.path}`);
      const rest = /^\{(\w+)\+\}$/.exec(seg);
      if (rest) {
        at.greedy ??= { name: rest[1]!, routes: new Map() };
        if (at.greedy.name !== rest[1]) throw new Error(`conflicting parameter names at ${route.path}`);
        greedy = true;
        continue;
      }
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
    (greedy ? at.greedy!.routes : at.routes).set(route.method, route);
  }

  type Found = { node: Pick<Node, 'routes'>; params: Record<string, string>; path: string[] };
  /** `ci`: literal segments compared without regard to case (only to suggest the path the client meant). */
  const find = (at: Node, segs: string[], i: number, params: Record<string, string>, ci = false, path: string[] = []): Found | undefined => {
    if (i === segs.length) return at.routes.size > 0 ? { node: at, params, path } : undefined;
    const seg = segs[i]!;
    const literals = ci ? [...at.literals].filter(([k]) => k.toLowerCase() === seg.toLowerCase()) : at.literals.has(seg) ? [[seg, at.literals.get(seg)!] as const] : [];
    for (const [name, literal] of literals) {
      const viaLiteral = find(literal, segs, i + 1, params, ci, [...path, name]);
      if (viaLiteral) return viaLiteral;
    }
    if (at.param) {
      const viaParam = find(at.param.node, segs, i + 1, { ...params, [at.param.name]: seg }, ci, [...path, encodeURIComponent(seg)]);
      if (viaParam) return viaParam;
    }
    if (at.greedy) {
      const rest = segs.slice(i);
      return { node: at.greedy, params: { ...params, [at.greedy.name]: rest.join('/') }, path: [...path, ...rest.map(encodeURIComponent)] };
    }
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
    if (!found) {
      // paths are case-sensitive (as in API Gateway): name the path that differs only in case
      const near = find(root, segs, 0, {}, true);
      return near ? { kind: 'not_found', suggestion: `/${near.path.join('/')}` } : { kind: 'not_found' };
    }
    const route = found.node.routes.get(method.toUpperCase());
    if (!route) return { kind: 'method_not_allowed', allow: [...found.node.routes.keys()].sort() };
    return { kind: 'route', route, params: found.params };
  };
}
