import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The folders' directions (docs/architecture.md, "Folders"): functions/<family> import only
 * lib/ (and their own family's modules); nothing in lib/ imports functions/, scripts/ or
 * infra/; infra/ imports no scripts/; and no module of lib/, functions/ or infra/ is part of an
 * import cycle (type-only and dynamic imports count too). Imports are read from the source
 * text: static `import`/`export … from` and `import('…')`.
 */
const ROOT = resolve(import.meta.dirname, '../..');

function files(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const rel = join(dir, name);
    if (statSync(join(ROOT, rel)).isDirectory()) return files(rel);
    return rel.endsWith('.ts') && !rel.endsWith('.d.ts') ? [rel] : [];
  });
}

const IMPORT_RE = /(?:^|[\s;])(?:import|export)\b[^'"]*?from\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)|^import\s+['"]([^'"]+)['"]/gm;

/** The repository-relative files a module imports (relative specifiers only). */
function importsOf(file: string): string[] {
  const src = readFileSync(join(ROOT, file), 'utf8');
  const out: string[] = [];
  for (const m of src.matchAll(IMPORT_RE)) {
    const spec = m[1] ?? m[2] ?? m[3]!;
    if (!spec.startsWith('.')) continue;
    out.push(relative(ROOT, resolve(join(ROOT, dirname(file)), spec.replace(/\.js$/, '.ts'))));
  }
  return out;
}

const SOURCES = [...files('lib'), ...files('functions'), ...files('infra')];
const GRAPH = new Map(SOURCES.map((f) => [f, importsOf(f)]));

const top = (f: string) => f.split('/')[0]!;
const family = (f: string) => f.split('/')[1]!;

describe('folder directions', () => {
  it('lib/ imports nothing from functions/, scripts/ or infra/', () => {
    const bad = [...GRAPH].filter(([f]) => top(f) === 'lib').flatMap(([f, deps]) => deps.filter((d) => top(d) !== 'lib').map((d) => `${f} -> ${d}`));
    expect(bad).toEqual([]);
  });

  it('functions/<family> import only lib/ and their own family', () => {
    const bad = [...GRAPH]
      .filter(([f]) => top(f) === 'functions')
      .flatMap(([f, deps]) =>
        deps.filter((d) => top(d) !== 'lib' && !(top(d) === 'functions' && family(d) === family(f))).map((d) => `${f} -> ${d}`),
      );
    expect(bad).toEqual([]);
  });

  it('infra/ imports no scripts/', () => {
    const bad = [...GRAPH]
      .filter(([f]) => top(f) === 'infra')
      .flatMap(([f, deps]) => deps.filter((d) => top(d) === 'scripts').map((d) => `${f} -> ${d}`));
    expect(bad).toEqual([]);
  });

  it('lib/, functions/ and infra/ have no import cycles', () => {
    const inScope = (f: string) => top(f) === 'lib' || top(f) === 'functions' || top(f) === 'infra';
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const stack: string[] = [];
    const visit = (f: string) => {
      state.set(f, 'open');
      stack.push(f);
      for (const d of GRAPH.get(f) ?? []) {
        if (!inScope(d) || !GRAPH.has(d)) continue;
        if (state.get(d) === 'open') cycles.push([...stack.slice(stack.indexOf(d)), d].join(' -> '));
        else if (!state.has(d)) visit(d);
      }
      stack.pop();
      state.set(f, 'done');
    };
    for (const f of GRAPH.keys()) if (inScope(f) && !state.has(f)) visit(f);
    expect(cycles).toEqual([]);
  });

  it('lib/ folders form a directed acyclic graph (type-only imports count)', () => {
    // a folder of lib/ is its first path segment; a file at lib/'s root is a node of its own
    const node = (f: string) => f.split('/').slice(0, 2).join('/');
    const edges = new Map<string, Map<string, string>>();
    for (const [f, deps] of GRAPH) {
      if (top(f) !== 'lib') continue;
      for (const d of deps) {
        if (top(d) !== 'lib' || node(d) === node(f)) continue;
        const out = edges.get(node(f)) ?? new Map<string, string>();
        if (!out.has(node(d))) out.set(node(d), `${f} -> ${d}`);
        edges.set(node(f), out);
      }
    }
    // Tarjan's strongly connected components: each one with more than one folder is a cycle
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const cycles: string[] = [];
    const connect = (v: string) => {
      index.set(v, index.size);
      low.set(v, index.get(v)!);
      stack.push(v);
      onStack.add(v);
      for (const w of edges.get(v)?.keys() ?? []) {
        if (!index.has(w)) {
          connect(w);
          low.set(v, Math.min(low.get(v)!, low.get(w)!));
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
      if (low.get(v) !== index.get(v)) return;
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length < 2) return;
      // name every import that keeps the folders of the cycle together, so the mend is obvious
      const inside = component.flatMap((a) => [...(edges.get(a) ?? [])].filter(([b]) => component.includes(b)).map(([, why]) => why));
      cycles.push(`${component.sort().join(' <-> ')}: ${inside.sort().join('; ')}`);
    };
    for (const v of edges.keys()) if (!index.has(v)) connect(v);
    expect(cycles).toEqual([]);
  });

  it('functions/ build no DynamoDB command: data access lives in lib/', () => {
    const bad = files('functions').filter((f) => /from ['"]@aws-sdk\/(lib|client)-dynamodb['"]/.test(readFileSync(join(ROOT, f), 'utf8')));
    expect(bad).toEqual([]);
  });

  /**
   * Data access has a home (issue 34): a "feature store module" is lib/store/** (the table
   * machinery) or, inside a feature folder lib/<feature>/, its `store.ts` or `store/` folder,
   * which declares the feature's keys and item shapes and exposes named data-access functions.
   * No other lib file builds a DynamoDB command: it imports no value (a command, a client, an
   * SDK error) from @aws-sdk/lib-dynamodb or @aws-sdk/client-dynamodb; a type-only import
   * builds nothing.
   */
  const isStoreModule = (f: string) => /^lib\/store\//.test(f) || /^lib\/[^/]+\/store(\.ts$|\/)/.test(f);
  const SDK_IMPORT_RE = /^\s*import\s+(type\s+)?(\{[^}]*\}|[^'"]*?)\s*from\s*['"]@aws-sdk\/(?:lib|client)-dynamodb['"]/gm;
  /** Whether `src` imports a value (not only types) from the DynamoDB SDK. */
  const importsSdkValue = (src: string) =>
    /\bimport\s*\(\s*['"]@aws-sdk\/(?:lib|client)-dynamodb['"]/.test(src) ||
    [...src.matchAll(SDK_IMPORT_RE)].some(([, typeOnly, clause]) => {
      if (typeOnly) return false;
      const names = clause!
        .replace(/[{}]/g, '')
        .split(',')
        .map((n) => n.trim())
        .filter(Boolean);
      return !clause!.startsWith('{') || names.some((n) => !n.startsWith('type '));
    });

  it('no lib file outside the feature store modules builds a DynamoDB command', () => {
    const bad = files('lib').filter((f) => !isStoreModule(f) && importsSdkValue(readFileSync(join(ROOT, f), 'utf8')));
    expect(bad, "move these files' DynamoDB commands into their feature's store module (lib/<feature>/store.ts)").toEqual([]);
  });

  it('tells a command import from a type-only one', () => {
    expect(importsSdkValue("import { GetCommand } from '@aws-sdk/lib-dynamodb';")).toBe(true);
    expect(importsSdkValue("import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';")).toBe(true);
    expect(importsSdkValue("import { type PutCommandInput, PutCommand } from '@aws-sdk/lib-dynamodb';")).toBe(true);
    expect(importsSdkValue("import * as ddb from '@aws-sdk/lib-dynamodb';")).toBe(true);
    expect(importsSdkValue("const { GetCommand } = await import('@aws-sdk/lib-dynamodb');")).toBe(true);
    expect(importsSdkValue("import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';")).toBe(false);
    expect(importsSdkValue("import { type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';")).toBe(false);
    expect(isStoreModule('lib/users/store.ts') && isStoreModule('lib/sharing/store/shares.ts') && isStoreModule('lib/store/tx.ts')).toBe(true);
    expect(isStoreModule('lib/users/sessions.ts') || isStoreModule('lib/resources/store-helpers.ts')).toBe(false);
  });

  it('reads the imports it judges (the parser sees static, type-only and dynamic imports)', () => {
    expect(GRAPH.get('lib/events/queue.ts')).toEqual(
      expect.arrayContaining(['lib/config.ts', 'lib/events/queue-port.ts', 'lib/events/memory-queue.ts', 'lib/events/sqs-queue.ts']),
    );
    expect(GRAPH.size).toBeGreaterThan(150);
  });
});
