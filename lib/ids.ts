import { v7 } from 'uuid';

/** Resource ids are UUIDv7: unique, and sortable by creation time. */
export const newId = (): string => v7();

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const nowIso = (): string => new Date().toISOString();
