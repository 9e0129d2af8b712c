import type { Principal } from '../auth/principal.js';
import { markMissed } from '../core/admission.js';
import type { Tenant } from '../store/tenants.js';

/**
 * The principal of a speculative run: the credential's facts at once, the account (and so
 * `operator`) once its read returned; before that, reading them ends the speculation.
 */
export function speculativePrincipal(
  facts: Pick<Principal, 'kind' | 'tenantId' | 'id' | 'user' | 'scopes' | 'client'>,
  tenantRead: Promise<Tenant | undefined>,
  operatorScope: string,
): Principal {
  let tenant: Tenant | undefined;
  tenantRead.then(
    (t) => {
      if (t?.status === 'active') tenant = t;
    },
    () => undefined,
  );
  return {
    ...facts,
    get tenant(): Tenant {
      return tenant ?? markMissed();
    },
    get operator(): boolean {
      if (!facts.scopes.includes(operatorScope)) return false;
      return (tenant ?? markMissed()).operator;
    },
  };
}
