import ipaddr from 'ipaddr.js';
import * as z from 'zod/v4';
import { config } from '../config.js';
import { atLeastOneField } from '../schemas.js';
import type { Tenant } from '../store/tenants.js';

/**
 * Account settings (PUT /api/v1/settings, settings:write). Stored on the tenant item as
 * `settings` (only the values set), so every authenticated request already has them: the
 * API-key IP allow-list costs no extra read. Features read the effective values with
 * accountSettings(principal.tenant).
 *
 * | setting                       | default | range          | used by                                  |
 * |-------------------------------|---------|----------------|------------------------------------------|
 * | history_retention_versions    | 10      | 1–100          | versions kept for new resources          |
 * | temp_access_max_seconds       | 86400   | 60–2592000     | longest temporary-access grant (400 above it) |
 * | webhooks.max_attempts         | 8 (*)   | 1–20           | delivery attempts before the DLQ         |
 * | webhooks.timeout_seconds      | 10 (*)  | 1–30           | per-attempt timeout                      |
 * | webhooks.allow_loopback       | false   | dev only       | loopback receivers (local runtime only)  |
 * | api_key_ip_allowlist          | []      | ≤ 100 CIDRs    | API keys are refused from other IPs (403 ip_not_allowed) |
 *
 * (*) from config WEBHOOK_MAX_ATTEMPTS / WEBHOOK_TIMEOUT_MS.
 */
const Cidr = z
  .string()
  .max(64)
  .refine(
    (s) => {
      try {
        if (s.includes('/')) ipaddr.parseCIDR(s);
        else ipaddr.parse(s);
        return ipaddr.isValid(s.split('/')[0]!);
      } catch {
        return false;
      }
    },
    { message: 'not an IP address or CIDR block' },
  );

const WebhookSettings = z.strictObject({
  max_attempts: z.number().int().min(1).max(20).optional(),
  timeout_seconds: z.number().int().min(1).max(30).optional(),
  allow_loopback: z.boolean().optional(),
});

/** Temporary access: the account's default cap, and the ceiling no account setting may pass (30 days). */
export const TEMP_ACCESS_DEFAULT_MAX_SECONDS = 86_400;
export const TEMP_ACCESS_CEILING_SECONDS = 30 * 86_400;

/** PUT body: each key present replaces that setting (`webhooks` as a whole); null resets it. */
export const SettingsBody = atLeastOneField(
  z.strictObject({
    history_retention_versions: z.number().int().min(1).max(100).nullable().optional(),
    temp_access_max_seconds: z.number().int().min(60).max(TEMP_ACCESS_CEILING_SECONDS).nullable().optional(),
    webhooks: WebhookSettings.nullable().optional(),
    api_key_ip_allowlist: z.array(Cidr).max(100).nullable().optional(),
  }),
  'at least one setting is required',
);
export type SettingsBody = z.infer<typeof SettingsBody>;

export interface AccountSettings {
  readonly history_retention_versions: number;
  readonly temp_access_max_seconds: number;
  readonly webhooks: { readonly max_attempts: number; readonly timeout_seconds: number; readonly allow_loopback: boolean };
  readonly api_key_ip_allowlist: readonly string[];
}

export function accountSettings(tenant: Pick<Tenant, 'settings'>): AccountSettings {
  const s = (tenant.settings ?? {}) as Partial<Record<keyof AccountSettings, unknown>>;
  const w = (s.webhooks ?? {}) as Partial<AccountSettings['webhooks']>;
  const cfg = config();
  return {
    history_retention_versions: (s.history_retention_versions as number | undefined) ?? 10,
    temp_access_max_seconds: (s.temp_access_max_seconds as number | undefined) ?? TEMP_ACCESS_DEFAULT_MAX_SECONDS,
    webhooks: {
      max_attempts: w.max_attempts ?? cfg.WEBHOOK_MAX_ATTEMPTS,
      timeout_seconds: w.timeout_seconds ?? Math.ceil(cfg.WEBHOOK_TIMEOUT_MS / 1000),
      // the account's opt-in counts only where the deployment allows loopback at all
      allow_loopback: cfg.WEBHOOKS_ALLOW_LOOPBACK && w.allow_loopback === true,
    },
    api_key_ip_allowlist: (s.api_key_ip_allowlist as string[] | undefined) ?? [],
  };
}

/** Whether `ip` is inside one of the allow-list's addresses or CIDR blocks. */
export function ipAllowed(allowlist: readonly string[], ip: string | null): boolean {
  if (allowlist.length === 0) return true;
  if (!ip) return false;
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.process(ip);
  } catch {
    return false;
  }
  return allowlist.some((entry) => {
    try {
      const [range, bits] = entry.includes('/') ? ipaddr.parseCIDR(entry) : [ipaddr.process(entry), addr.kind() === 'ipv4' ? 32 : 128];
      const r = range.kind() === 'ipv6' && (range as ipaddr.IPv6).isIPv4MappedAddress() ? (range as ipaddr.IPv6).toIPv4Address() : range;
      return r.kind() === addr.kind() && addr.match(r as never, r.kind() === 'ipv4' && range.kind() === 'ipv6' ? bits - 96 : bits);
    } catch {
      return false;
    }
  });
}
