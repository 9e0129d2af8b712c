import { daysLeft, EXPIRY_THRESHOLDS_DAYS, emitNoticeOnce, thresholdFor } from '../../lib/events/expiry.js';
import { eventPut } from '../../lib/outbox/outbox.js';
import { emitExpiringSamlCertificates } from '../../lib/federation/saml.js';
import { keys } from '../../lib/store/keys.js';
import { tableName } from '../../lib/store/client.js';
import { listResources } from '../../lib/resources/store.js';
import { listTenantIds } from '../../lib/store/tenants.js';
import { withTenant } from '../../lib/tenancy/scope.js';
import type { CertMeta } from '../../lib/certificates/service.js';

/**
 * Expiry tracking: `certificate.expiring` once per certificate and warning threshold
 * (30, 7 and 1 days before not_after by default). The notice sent last is recorded on the
 * certificate's head item (`expiry_notice` = "<serial>:<threshold>") in the same
 * transaction as the outbox event, conditioned on the head's version, so two sweeps never
 * emit the same notice twice; a renewal (new serial, new head) starts afresh. The
 * scheduled sweeper calls sweepCertificateExpiry(); emitExpiringCertificates() does one
 * account. In AWS the hourly `CertificateExpirySweeper` job (infra/background.ts) calls sweep().
 */
interface ExpiryOptions {
  readonly now?: Date;
  readonly thresholdsDays?: readonly number[];
}

export async function emitExpiringCertificates(tenantId: string, opts: ExpiryOptions = {}): Promise<{ emitted: number; checked: number }> {
  const now = opts.now ?? new Date();
  const thresholds = opts.thresholdsDays ?? EXPIRY_THRESHOLDS_DAYS;
  let emitted = 0;
  let checked = 0;
  let cursor: string | undefined;
  do {
    const page = await listResources<CertMeta>(tenantId, 'certificate', { limit: 500, cursor });
    for (const rec of page.items) {
      checked++;
      if (rec.meta.status !== 'active') continue;
      const notAfter = new Date(rec.meta.not_after);
      const threshold = thresholdFor(notAfter, now, thresholds);
      if (threshold === undefined) continue;
      const notice = `${rec.meta.serial_number}:${threshold}`;
      const noticed = await emitNoticeOnce([
        {
          Update: {
            TableName: tableName(),
            Key: keys.resource(tenantId, 'certificate', rec.id),
            UpdateExpression: 'SET expiry_notice = :n',
            ConditionExpression: 'version = :v AND (attribute_not_exists(expiry_notice) OR expiry_notice <> :n)',
            ExpressionAttributeValues: { ':n': notice, ':v': rec.version },
          },
        },
        eventPut(tenantId, 'certificate.expiring', {
          id: rec.id,
          name: rec.name,
          serial: rec.meta.serial_number,
          subject: rec.meta.subject,
          not_after: rec.meta.not_after,
          days_left: daysLeft(notAfter, now),
          threshold_days: threshold,
        }),
      ]);
      if (noticed) emitted++;
    }
    cursor = page.nextCursor;
  } while (cursor);
  return { emitted, checked };
}

/** Every account, page by page (the scheduled sweeper's entry point). */
async function sweepCertificateExpiry(opts: ExpiryOptions = {}): Promise<{ tenants: number; emitted: number }> {
  let after: string | undefined;
  let tenants = 0;
  let emitted = 0;
  do {
    // the TENANTS listing (the worker's own role); each account's sweep in its tenant session
    const page = await listTenantIds(100, after);
    for (const id of page.ids) {
      tenants++;
      emitted += await withTenant(id, async () => {
        const certificates = (await emitExpiringCertificates(id, opts)).emitted;
        // SAML metadata certificates (lib/federation/saml.ts) raise their expiry events here too
        return certificates + (await emitExpiringSamlCertificates(id, opts)).emitted;
      });
    }
    after = page.cursor;
  } while (after);
  return { tenants, emitted };
}

/** The sweeper as a Lambda function, invoked hourly by an EventBridge schedule (infra/background.ts). */
export const sweep = async (): Promise<{ tenants: number; emitted: number }> => sweepCertificateExpiry();
