// The bundle's stand-in for @seriousme/openapi-schema-validator inside fastify-openapi-glue: no meta-schema check at start.
// fastify-openapi-glue validates openapi.yaml against the OpenAPI 3.x JSON Schema on every start (~0.5 s of Ajv
// compiling, and the schema files read from its package folder). CI already validates the document
// (`pnpm lint:openapi`, `pnpm contracts:check`), and the file ships with the build it was checked with. The
// $ref checks and resolution stay the package's own.
import { Validator as FullValidator } from '@seriousme/openapi-schema-validator';

export class Validator extends FullValidator {
  getAjvValidator() {
    return () => true;
  }
}
