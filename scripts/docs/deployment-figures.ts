/**
 * `npm run docs:figures`: every figure docs/deployment.md states about the synthesized
 * templates (resources per stack and per template, parameters, templates, roles, functions,
 * REST API resources and methods), computed by synthesizing the default and the CORS variant
 * over the whole route table, and written into the page between `<!--fig:NAME-->` and
 * `<!--/fig-->`. `npm run docs:figures -- --check` (and test/docs/deployment-figures.test.ts)
 * fails when the page and the templates disagree, naming each figure.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type SynthTemplate, synthesize } from '../../test/infra/synth.js';

export const DEPLOYMENT_DOC = join(import.meta.dirname, '../../docs/deployment.md');

const count = (t: SynthTemplate, type?: string) => Object.values(t.resources).filter((r) => !type || r.Type === type).length;
const n = (v: number) => v.toLocaleString('en-US');
/** The family of a nested template file (`secretsapiapiFamilyCredentials….nested.template.json` -> credentials). */
const familyOf = (t: SynthTemplate) => (/Family([A-Za-z]+)/.exec(t.file)?.[1] ?? t.file).toLowerCase();

/** The figures by name, as the page writes them. */
export function deploymentFigures(): Record<string, string> {
  const figures: Record<string, string> = {};
  const plain = synthesize();
  const cors = synthesize({ context: { corsOrigins: 'https://app.example.com,https://admin.example.com' } });
  const apiTemplates = (s: typeof plain) => [s.api, ...s.nested];
  const total = (s: typeof plain) => apiTemplates(s).reduce((sum, t) => sum + count(t), 0);
  const largest = (s: typeof plain) => [...s.templates].sort((a, b) => count(b) - count(a))[0]!;
  const largestFamily = (s: typeof plain) => [...s.families].sort((a, b) => count(b) - count(a))[0]!;

  figures['data-resources'] = n(count(plain.data));
  figures['api-resources'] = n(total(plain));
  figures['api-templates'] = n(apiTemplates(plain).length);
  figures['parent-resources'] = n(count(plain.api));
  figures['largest-template'] = largest(plain) === plain.api ? 'the API stack itself' : familyOf(largest(plain));
  figures['largest-resources'] = n(count(largest(plain)));
  const family = largestFamily(plain);
  figures['family-largest'] = familyOf(family);
  figures['family-largest-routes'] = n(count(family, 'AWS::ApiGateway::Method'));
  figures['family-largest-resources'] = n(count(family));
  figures['family-largest-mb'] = (family.bytes / 1_000_000).toFixed(2);
  figures['rest-resources'] = n(count(plain.api, 'AWS::ApiGateway::Resource'));
  figures['rest-resources-with-root'] = n(count(plain.api, 'AWS::ApiGateway::Resource') + 1);
  figures['methods'] = n(plain.templates.reduce((sum, t) => sum + count(t, 'AWS::ApiGateway::Method'), 0));
  figures['functions'] = n(plain.templates.reduce((sum, t) => sum + count(t, 'AWS::Lambda::Function'), 0));
  figures['roles'] = n(plain.templates.reduce((sum, t) => sum + count(t, 'AWS::IAM::Role'), 0));
  figures['alarms'] = n(plain.templates.reduce((sum, t) => sum + count(t, 'AWS::CloudWatch::Alarm'), 0));
  const corsFamily = largestFamily(cors);
  figures['cors-largest'] = familyOf(corsFamily);
  figures['cors-largest-resources'] = n(count(corsFamily));
  figures['cors-largest-parameters'] = n(Object.keys(corsFamily.parameters).length);
  figures['cors-parent-resources'] = n(count(cors.api));
  figures['cors-api-resources'] = n(total(cors));
  return figures;
}

const MARK = /<!--fig:([a-z-]+)-->(.*?)<!--\/fig-->/g;

/** Each figure of the page that differs from the templates: name, page, templates. */
export function disagreements(page: string, figures: Record<string, string>): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const [, name, value] of page.matchAll(MARK)) {
    seen.add(name!);
    if (!(name! in figures)) out.push(`docs/deployment.md names a figure "${name}" that scripts/docs/deployment-figures.ts does not compute`);
    else if (figures[name!] !== value) out.push(`${name}: the page says ${value}, the templates ${figures[name!]}`);
  }
  for (const name of Object.keys(figures)) if (!seen.has(name)) out.push(`${name}: computed but not on the page (mark it <!--fig:${name}-->…<!--/fig-->)`);
  return out;
}

export function writeFigures(page: string, figures: Record<string, string>): string {
  return page.replace(MARK, (whole, name: string) => (name in figures ? `<!--fig:${name}-->${figures[name]}<!--/fig-->` : whole));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stderr.write('deployment figures: synthesizing the default and the CORS variant over the whole route table…\n');
  const figures = deploymentFigures();
  const page = readFileSync(DEPLOYMENT_DOC, 'utf8');
  if (process.argv.includes('--check')) {
    const wrong = disagreements(page, figures);
    if (wrong.length > 0) {
      process.stderr.write(`docs/deployment.md disagrees with the templates (npm run docs:figures rewrites it):\n${wrong.join('\n')}\n`);
      process.exit(1);
    }
    process.stderr.write(`docs/deployment.md: ${Object.keys(figures).length} figures agree with the templates\n`);
  } else {
    writeFileSync(DEPLOYMENT_DOC, writeFigures(page, figures));
    for (const [k, v] of Object.entries(figures)) process.stdout.write(`${k}\t${v}\n`);
  }
}
