// The one YAML parser of the repository, with the one schema: the contract gates read openapi.yaml exactly as the
// server does (its parseYaml, apps/api/src/contract/openapi-contract.ts; scripts/build.mjs does the same in plain JS): js-yaml
// with YAML 1.2's core schema, where an unquoted `2025-02-01` is a string, not a date that would reach the served
// JSON as `2025-02-01T00:00:00.000Z`.
import { CORE_SCHEMA, dump } from 'js-yaml';

export { parseYaml } from '../../apps/api/src/contract/openapi-contract.js';

export const stringifyYaml = (value: unknown): string => dump(value, { schema: CORE_SCHEMA });
