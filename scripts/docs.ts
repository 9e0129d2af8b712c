/**
 * `npm run docs [-- <dir>]`: the static API reference, built from the OpenAPI document
 * (scripts/openapi.ts), into build/docs/ (ignored):
 * - index.html: the reference (Redoc through `redocly build-docs --inlineBundle`: the page
 *   carries its scripts, so it opens offline, from a file or any static host);
 * - guide.html: the README's walk-through (create an account, a key, then a secret: create,
 *   read, update with If-Match), linking to the reference;
 * - openapi.json: the document itself (the reference's download link).
 * test/docs/docs.test.ts opens the pages in headless Chromium.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildOpenApi } from './openapi.js';

export const DEFAULT_DOCS_DIR = 'build/docs';

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
/** Inline Markdown of the README's prose: `code`, **bold** and [links](url). */
const inline = (s: string) =>
  escape(s)
    .replace(/`([^`]+)`/g, '<code>$1</code>')
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
    .replace(/\[([^\]]+)\]\(([^)]+)\)/g, '<a href="$2">$1</a>');

/** A README section (`## <title>` up to the next `## `) as HTML: paragraphs, lists and code blocks. */
export function sectionHtml(markdown: string, title: string): string {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.trim() === `## ${title}`);
  if (start < 0) throw new Error(`README has no "## ${title}" section`);
  const end = lines.findIndex((l, i) => i > start && l.startsWith('## '));
  const body = lines.slice(start + 1, end < 0 ? undefined : end);
  const out: string[] = [];
  let para: string[] = [];
  const flush = () => {
    if (para.length > 0) out.push(`<p>${inline(para.join(' '))}</p>`);
    para = [];
  };
  for (let i = 0; i < body.length; i++) {
    const line = body[i]!;
    if (line.startsWith('```')) {
      flush();
      const code: string[] = [];
      for (i++; i < body.length && !body[i]!.startsWith('```'); i++) code.push(body[i]!);
      out.push(`<pre><code>${escape(code.join('\n'))}</code></pre>`);
    } else if (line.startsWith('- ')) {
      flush();
      out.push(`<ul><li>${inline(line.slice(2))}</li></ul>`);
    } else if (line.startsWith('### ')) {
      flush();
      out.push(`<h3>${inline(line.slice(4))}</h3>`);
    } else if (line.trim() === '') flush();
    else para.push(line.trim());
  }
  flush();
  return out.join('\n').replace(/<\/ul>\n<ul>/g, '\n');
}

function guidePage(readme: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>secrets-api: walk-through</title>
<style>
body { font: 16px/1.5 system-ui, sans-serif; max-width: 52rem; margin: 2rem auto; padding: 0 1rem; color: #1f2328; }
pre { background: #f6f8fa; padding: 1rem; overflow-x: auto; border-radius: 6px; }
code { font: 14px ui-monospace, monospace; }
nav a { margin-right: 1rem; }
</style>
</head>
<body>
<nav><a href="index.html">API reference</a><a href="openapi.json">OpenAPI document</a></nav>
<h1>Walk-through</h1>
<p>From an empty local runtime to a secret updated under If-Match: every call below is an operation of the <a href="index.html">API reference</a>.</p>
${sectionHtml(readme, 'Walk-through')}
</body>
</html>
`;
}

/** What Redoc's bundle would fetch from another host: its attribution logos, icon sets and a telemetry endpoint. */
const REMOTE: readonly [RegExp, string][] = [
  [/https:\/\/cdn\.redoc\.ly\/redoc\/logo-mini(-full)?\.svg/g, "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E"],
  [/https:\/\/cdn\.redocly\.com\/icons\/[\w./-]+/g, 'data:,'],
  [/https:\/\/otel\.cloud\.redocly\.com\/v1\/traces/g, 'data:,'],
];
/** No request from a reader's browser leaves for another host: fetches, images and fonts are the page's own (CSP). */
const CSP = "connect-src 'self' data:; img-src 'self' data: blob:; font-src 'self' data:; frame-src 'none'";

/** The reference page with nothing remote: the bundle's remote addresses replaced, and a policy that refuses any other. */
export function selfContained(html: string): string {
  let out = html;
  for (const [re, local] of REMOTE) out = out.replace(re, local);
  return out.replace(/<head>/i, `<head>\n<meta http-equiv="Content-Security-Policy" content="${CSP}">`);
}

export async function buildDocs(dir = DEFAULT_DOCS_DIR) {
  mkdirSync(dir, { recursive: true });
  const doc = await buildOpenApi();
  doc.info.description = `${doc.info.description}\n\nNew here? Start with the [walk-through](guide.html).`;
  const spec = join(dir, 'openapi.json');
  writeFileSync(spec, `${JSON.stringify(doc, null, 2)}\n`);
  writeFileSync(join(dir, 'guide.html'), guidePage(readFileSync(resolve('README.md'), 'utf8')));
  const built = spawnSync(
    'npx',
    ['--no-install', 'redocly', 'build-docs', spec, '--inlineBundle', '--title', 'secrets-api reference', '-o', join(dir, 'index.html')],
    { encoding: 'utf8' },
  );
  if (built.status !== 0) throw new Error(`redocly build-docs failed (status ${built.status}):\n${built.stdout}${built.stderr}`);
  const page = join(dir, 'index.html');
  writeFileSync(page, selfContained(readFileSync(page, 'utf8')));
  return dir;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dir = await buildDocs(process.argv[2]);
  process.stdout.write(`wrote ${dir}/index.html (reference), ${dir}/guide.html (walk-through), ${dir}/openapi.json\n`);
}
