// Who may call each REST operation, read from the contract: `security` (authentication) and `x-required-role`.
import type { Role } from '@users-posts/db';
import { requireAuthenticated, requireRole, type Principal } from '../auth/principal.js';
import type { OpenapiDocument } from '../contract/openapi-contract.js';

export interface Requirement {
  authenticated: boolean;
  role: Role | undefined;
}

type OperationObject = { operationId?: string; security?: Record<string, string[]>[]; 'x-required-role'?: Role };

/** operationId → requirement. An operation without `security` inherits the document's top-level one. */
export function operationRequirements(document: OpenapiDocument): Map<string, Requirement> {
  const globalSecurity = (document.security as OperationObject['security']) ?? [];
  // bound: operations of openapi.yaml, built at start
  const requirements = new Map<string, Requirement>();
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item) as OperationObject[]) {
      if (!operation?.operationId) continue;
      const security = operation.security ?? globalSecurity;
      // `security: []`, or an alternative `{}`, means anonymous callers are allowed.
      const authenticated = security.length > 0 && security.every((alternative) => Object.keys(alternative).length > 0);
      requirements.set(operation.operationId, { authenticated, role: operation['x-required-role'] });
    }
  }
  return requirements;
}

/** Throws 401/403 when the principal does not meet the requirement. */
export function enforce(requirement: Requirement | undefined, principal: Principal): void {
  if (!requirement) return;
  if (requirement.role) requireRole(principal, requirement.role);
  else if (requirement.authenticated) requireAuthenticated(principal);
}
