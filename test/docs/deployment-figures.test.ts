import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEPLOYMENT_DOC, deploymentFigures, disagreements, writeFigures } from '../../scripts/docs/deployment-figures.js';

/**
 * docs/deployment.md cannot drift from the templates: every figure it marks is recomputed
 * from the default and the CORS variant synthesized over the whole route table.
 */
describe('docs/deployment.md figures', () => {
  const figures = deploymentFigures();
  const page = readFileSync(DEPLOYMENT_DOC, 'utf8');

  it('agree with the synthesized templates, every one', () => {
    expect(Object.keys(figures).length).toBeGreaterThan(15);
    expect(disagreements(page, figures)).toEqual([]);
  });

  it('a drifted figure is reported by name, and npm run docs:figures writes it back', () => {
    const drifted = page.replace(/<!--fig:data-resources-->[^<]*<!--\/fig-->/, '<!--fig:data-resources-->11<!--/fig-->');
    expect(disagreements(drifted, figures)).toEqual([`data-resources: the page says 11, the templates ${figures['data-resources']}`]);
    expect(writeFigures(drifted, figures)).toBe(page);
    const unknown = `${page}\n<!--fig:made-up-->1<!--/fig-->`;
    expect(disagreements(unknown, figures)).toEqual([expect.stringContaining('"made-up"')]);
  });
});
