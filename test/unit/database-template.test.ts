import pg from 'pg';
import mysql from 'mysql2';
import { describe, expect, it } from 'vitest';
import { checkTemplate, renderStatement, TemplateError, type Escaper } from '../../lib/database/template.js';
import { checkUsernameTemplate, newUsername, roleSlug } from '../../lib/database/usernames.js';
import { databaseRoleProblems } from '../../lib/database/records.js';

/** The drivers' own escaping, as the admin sessions use it. */
const PG: Escaper = { identifier: pg.escapeIdentifier, literal: pg.escapeLiteral };
const MY: Escaper = { identifier: (v) => mysql.escapeId(v), literal: (v) => mysql.escape(v) };
const values = { name: 'v_ro_abc', password: `p'w"d\\x\`;--`, expiration: '2026-01-02T03:04:05.000Z' };

describe('statement templates', () => {
  it('bare placeholders: name as identifier, others as literals, escaped by the driver', () => {
    expect(renderStatement('CREATE ROLE {{name}} LOGIN PASSWORD {{password}} VALID UNTIL {{ expiration }}', 'postgresql', values, PG)).toBe(
      `CREATE ROLE "v_ro_abc" LOGIN PASSWORD  E'p''w"d\\\\x\`;--' VALID UNTIL '2026-01-02T03:04:05.000Z'`,
    );
    expect(renderStatement("CREATE USER {{name}}@'%' IDENTIFIED BY {{password}}", 'mysql', values, MY)).toBe(
      "CREATE USER `v_ro_abc`@'%' IDENTIFIED BY 'p\\'w\\\"d\\\\x`;--'",
    );
  });

  it('Vault-style quoted placeholders are replaced with their quotes', () => {
    expect(renderStatement(`CREATE ROLE "{{name}}" WITH PASSWORD '{{password}}'`, 'postgresql', { ...values, password: 'pw' }, PG)).toBe(
      `CREATE ROLE "v_ro_abc" WITH PASSWORD 'pw'`,
    );
    expect(renderStatement(`CREATE USER '{{name}}'@'%' IDENTIFIED BY "{{password}}"`, 'mysql', { ...values, password: 'pw' }, MY)).toBe(
      `CREATE USER 'v_ro_abc'@'%' IDENTIFIED BY 'pw'`,
    );
    expect(renderStatement('GRANT SELECT ON db.* TO `{{name}}`', 'mysql', values, MY)).toBe('GRANT SELECT ON db.* TO `v_ro_abc`');
  });

  it('a hostile value stays one token', () => {
    const evil = { name: `x"; DROP TABLE t; --`, password: `'; DROP TABLE t; --`, expiration: 'now' };
    expect(renderStatement('GRANT SELECT ON t TO {{name}}', 'postgresql', evil, PG)).toBe('GRANT SELECT ON t TO "x""; DROP TABLE t; --"');
    expect(renderStatement('SET PASSWORD = PASSWORD({{password}})', 'mysql', evil, MY)).toBe("SET PASSWORD = PASSWORD('\\'; DROP TABLE t; --')");
    expect(renderStatement('GRANT SELECT ON t TO `{{name}}`', 'mysql', evil, MY)).toBe('GRANT SELECT ON t TO `x"; DROP TABLE t; --`');
  });

  it('refuses placeholders inside strings, identifiers, comments and dollar quotes, and unknown or unbalanced ones', () => {
    const refused: Array<[string, 'postgresql' | 'mysql']> = [
      ["SELECT '%{{name}}%'", 'postgresql'],
      ["SELECT 'a' || '{{name}}x'", 'postgresql'],
      ['SELECT "x{{name}}"', 'postgresql'],
      ['SELECT 1 -- {{password}}', 'postgresql'],
      ['SELECT 1 /* {{password}} */', 'mysql'],
      ['SELECT 1 # {{password}}', 'mysql'],
      ['DO $$ BEGIN PERFORM {{name}}; END $$', 'postgresql'],
      ['DO $body$ {{name}} $body$', 'postgresql'],
      ["SELECT E'\\'{{name}}'", 'postgresql'],
      ["SELECT 'it\\'s {{name}}'", 'mysql'],
      ['SELECT `{{name}}', 'mysql'],
      ['SELECT {{name}}"', 'postgresql'],
      ['SELECT `{{name}}`', 'postgresql'],
      ['SELECT {{user}}', 'postgresql'],
      ['SELECT {{name}', 'postgresql'],
      ["SELECT 'unterminated", 'postgresql'],
      ['SELECT \u0000', 'postgresql'],
    ];
    for (const [t, d] of refused) {
      expect(() => renderStatement(t, d, values, d === 'postgresql' ? PG : MY), t).toThrow(TemplateError);
      expect(() => checkTemplate(t, d), t).toThrow(TemplateError);
    }
    // strings and comments without placeholders are fine
    expect(renderStatement("COMMENT ON ROLE {{name}} IS 'lease -- {x}' /* ok */", 'postgresql', values, PG)).toBe(
      `COMMENT ON ROLE "v_ro_abc" IS 'lease -- {x}' /* ok */`,
    );
    expect(() => renderStatement('DROP ROLE {{name}} -- {{password}}', 'postgresql', { name: 'x' }, PG)).toThrow(TemplateError);
  });

  it('a placeholder without a value in that kind of statement is refused', () => {
    expect(() => renderStatement('DROP USER {{name}} {{password}}', 'mysql', { name: 'x' }, MY)).toThrow(/has no value/);
  });
});

describe('role checks and login names', () => {
  it('names come from the template: role slug, 16 random characters, engine length limits', () => {
    expect(roleSlug(`Read-Only'; DROP TABLE x; --`)).toBe('readonly');
    const a = newUsername(undefined, "ro'; DROP", 'mysql');
    expect(a).toMatch(/^v_rodrop_[a-z2-7]{16}$/);
    expect(a.length).toBeLessThanOrEqual(32);
    expect(newUsername(undefined, "ro'; DROP", 'mysql')).not.toBe(a);
    expect(checkUsernameTemplate('app_{{role}}', 'postgresql')).toMatch(/random/);
    expect(checkUsernameTemplate('v_{{random}}"; DROP TABLE t; --', 'postgresql')).toMatch(/only letters/);
    expect(checkUsernameTemplate(`${'x'.repeat(40)}{{random}}`, 'mysql')).toMatch(/exceed 32/);
    expect(checkUsernameTemplate(`${'x'.repeat(40)}{{random}}`, 'mariadb')).toBeNull();
    expect(checkUsernameTemplate('{{random}}{{who}}', 'postgresql')).toMatch(/unknown placeholder/);
  });

  it('databaseRoleProblems names each bad statement by its field and position', () => {
    expect(
      databaseRoleProblems(
        {
          creation_statements: ['CREATE ROLE {{name}}', "ALTER ROLE {{name}} PASSWORD 'x{{password}}'"],
          revocation_statements: ['DROP ROLE {{name}}', 'SELECT {{password}}'],
          rotation_statements: ['ALTER ROLE {{name}} VALID UNTIL {{expiration}}'],
          username_template: 'u{{random}}',
        },
        'postgresql',
      ).map((p) => p.field),
    ).toEqual(['creation_statements.1', 'revocation_statements.1', 'rotation_statements.0']);
  });
});
