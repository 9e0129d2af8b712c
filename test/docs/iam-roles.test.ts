import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ARCHITECTURE_DOC, iamRolesText, pageAgrees, writeIamRoles } from '../../scripts/docs/iam-roles.js';

/**
 * docs/architecture.md "Tenancy in IAM" lists what each role may do, generated from the
 * synthesized templates (npm run docs:iam): it cannot drift from infra/grants.ts.
 */
describe('docs/architecture.md roles', () => {
  const text = iamRolesText();
  const page = readFileSync(ARCHITECTURE_DOC, 'utf8');

  it('agree with the synthesized templates', () => {
    expect(text).toContain('TenantLookupWrite');
    expect(pageAgrees(page, text), 'run npm run docs:iam').toBe(true);
  });

  it('a drifted statement is caught, and npm run docs:iam writes the page back', () => {
    const drifted = page.replace('| TenantLookupWrite | dynamodb:PutItem, dynamodb:UpdateItem |', '| TenantLookupWrite | dynamodb:PutItem, dynamodb:UpdateItem, dynamodb:DeleteItem |');
    expect(drifted).not.toBe(page);
    expect(pageAgrees(drifted, text)).toBe(false);
    expect(writeIamRoles(drifted, text)).toBe(page);
  });
});
