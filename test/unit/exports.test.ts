import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * No dead exports: every export of lib/ and functions/ is imported by another module (of
 * lib/, functions/, scripts/, infra/ or a test), or is a handler the route table or the CDK
 * app names. A name used only inside its own file is not exported. Read from the source
 * text, as a whole word: a false "used" is possible, a false "unused" is not.
 */
function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? files(join(dir, n)) : n.endsWith('.ts') ? [join(dir, n)] : []));
}

const EXPORT_RE = /^export (?:async )?(?:const|function|class|interface|type|enum|let) ([A-Za-z0-9_]+)/gm;

describe('exports', () => {
  it('lib/ and functions/ export nothing that no other module uses', () => {
    const sources = [...files('lib'), ...files('functions')];
    const users = [...sources, ...files('scripts'), ...files('infra'), ...files('test')];
    const text = new Map(users.map((f) => [f, readFileSync(f, 'utf8')]));
    const named =
      text.get('lib/routes.ts')! +
      [...text]
        .filter(([f]) => f.startsWith('infra/'))
        .map(([, t]) => t)
        .join('\n');
    const dead: string[] = [];
    for (const f of sources) {
      for (const m of text.get(f)!.matchAll(EXPORT_RE)) {
        const name = m[1]!;
        const word = new RegExp(`\\b${name}\\b`);
        const handler = f.startsWith('functions/') && named.includes(`${f.slice('functions/'.length, -3)}.${name}`);
        if (!handler && !users.some((u) => u !== f && word.test(text.get(u)!))) dead.push(`${f}: ${name}`);
      }
    }
    expect(dead).toEqual([]);
  });
});
