// Generates typed GraphQL documents from a running server's introspection with GraphQL Code Generator's client
// preset, as a consumer of the API would (README "For API consumers"):
//   node scripts/consumers/generate-graphql-client.mjs <graphql endpoint URL> <documents glob> <output directory>
// Used by apps/api/test/consumers/graphql-from-introspection.test.ts.
import { generate } from '@graphql-codegen/cli';

const [schema, documents, output] = process.argv.slice(2);
if (!schema || !documents || !output) {
  console.error('usage: node scripts/consumers/generate-graphql-client.mjs <graphql URL> <documents glob> <output directory>');
  process.exit(2);
}
await generate(
  {
    schema,
    documents,
    generates: { [`${output.replace(/\/?$/, '/')}`]: { preset: 'client', config: { useTypeImports: true }, presetConfig: {} } },
    emitLegacyCommonJSImports: false,
    silent: true,
  },
  true,
);
