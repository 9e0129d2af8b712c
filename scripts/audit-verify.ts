/**
 * Verifies an audit export (JSON Lines) offline:
 *
 *   curl -s "$API/api/v1/audit/logs/export?from=...&to=..." -H "Authorization: Bearer $KEY" > audit.jsonl
 *   npx tsx scripts/audit-verify.ts audit.jsonl [pinned-public-key.json]
 *
 * The pinned key is the `public_key` JWK of an export you trust (save it once:
 * `tail -n1 audit.jsonl | jq .digest.public_key > audit-key.json`). Exit code 0 when the
 * export verifies, 1 otherwise. The algorithm is in lib/audit/verify.ts and needs nothing
 * but Node.js.
 */
import { readFileSync } from 'node:fs';
import { verifyExport, type JwkOkp } from '../lib/audit/verify.js';

const [file, keyFile] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: tsx scripts/audit-verify.ts <export.jsonl> [pinned-public-key.json]\n');
  process.exit(2);
}
const publicKey = keyFile ? (JSON.parse(readFileSync(keyFile, 'utf8')) as JwkOkp) : undefined;
const result = verifyExport(readFileSync(file, 'utf8'), { publicKey });
process.stdout.write(`${result.ok ? 'OK' : 'FAILED'}: ${result.count} entries, seq ${result.first_seq ?? '-'}..${result.last_seq ?? '-'}${publicKey ? '' : ' (key not pinned)'}\n`);
for (const p of result.problems) process.stdout.write(`  - ${p}\n`);
process.exit(result.ok ? 0 : 1);
