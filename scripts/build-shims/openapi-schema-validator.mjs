// The bundle's stand-in for @seriousme/openapi-schema-validator inside fastify-openapi-glue: no checks of the contract at start.
// fastify-openapi-glue validates openapi.yaml on every start: against the OpenAPI 3.x JSON Schema (~0.5 s of Ajv
// compiling, and the schema files read from its package folder) and then every $ref (a deep copy and a walk of the
// document, ~60 ms). CI already makes both checks on this very file (`pnpm lint:openapi`, `pnpm contracts:check`,
// Spectral), and the build ships the copy it was checked with (scripts/build.mjs). The $ref resolution glue needs
// (resolveRefs) stays the package's own.
import { Validator as FullValidator } from '@seriousme/openapi-schema-validator';

export class Validator extends FullValidator {
  getAjvValidator() {
    return () => true;
  }

  /** The package's validate() for the OpenAPI 3.x object glue passes, less its two checks; anything else as before. */
  async validate(data) {
    const version = typeof data === 'object' && data !== null && typeof data.openapi === 'string' ? data.openapi : '';
    if (!/^3\.[0-2]\./.test(version) || Object.keys(this.externalRefs).length > 0) return super.validate(data);
    this.specification = data;
    this.version = version.slice(0, 3);
    this.specificationVersion = version;
    this.specificationType = 'openapi';
    return { valid: true };
  }
}
