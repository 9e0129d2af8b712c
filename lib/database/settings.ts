import type { Dialect } from './template.js';

/**
 * A database role's connection settings and engine, without the drivers: what validation
 * (lib/database/records.ts, the service-config type) needs, so those modules do not load
 * pg and mysql2 (lib/database/session.ts does, for the routes that connect).
 */
export type Engine = 'postgresql' | 'mysql' | 'mariadb';

export interface ConnectionSettings {
  readonly id: string;
  /** The account whose connection this is: the private networks the operator opened for it apply (lib/database/session.ts). */
  readonly tenantId?: string;
  readonly engine: Engine;
  readonly host: string;
  readonly port: number;
  readonly database: string | null;
  readonly username: string;
  readonly password: string;
  /** The connection's own connect timeout; bounded by DATABASE_CONNECT_TIMEOUT_MS. */
  readonly connectTimeoutMs?: number | undefined;
  readonly tls: TlsSettings;
}

/** `disable`: plain TCP; `require`: TLS without certificate checks; `verify-ca`: chain only; `verify-full`: chain and host name. */
export interface TlsSettings {
  readonly mode: 'disable' | 'require' | 'verify-ca' | 'verify-full';
  /** PEM bundle of trusted CAs (default: the system's). */
  readonly ca?: string;
  /** Client certificate and key (PEM) for servers that require one. */
  readonly cert?: string;
  readonly key?: string;
}

export const dialectOf = (engine: Engine): Dialect => (engine === 'postgresql' ? 'postgresql' : 'mysql');
