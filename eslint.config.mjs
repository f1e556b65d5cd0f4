// ESLint (flat config). GraphQL: @graphql-eslint's schema-recommended rules on schema/schema.graphql (`pnpm
// lint:graphql`, run by .ci/run), with the two adjustments below.
import graphqlPlugin from '@graphql-eslint/eslint-plugin';

export default [
  {
    files: ['schema/**/*.graphql'],
    languageOptions: { parser: graphqlPlugin.parser, parserOptions: { graphQLConfig: { schema: 'schema/schema.graphql' } } },
    plugins: { '@graphql-eslint': graphqlPlugin },
    rules: {
      ...graphqlPlugin.configs['flat/schema-recommended'].rules,
      // The schema writes a one-line description inline ("…") and a longer one as a block ("""…"""), as the GraphQL
      // specification's own examples do; the rule wants one style for both. Every description is required
      // (`require-description`, and `pnpm contracts:check` for roots and arguments), only its quoting is free.
      '@graphql-eslint/description-style': 'off',
      // Values, not entities: statistics and the Relay connection types have no identity of their own to cache by.
      '@graphql-eslint/strict-id-in-types': ['error', { acceptedIdNames: ['id'], acceptedIdTypes: ['ID'], exceptions: { types: ['Statistics', 'PageInfo'], suffixes: ['Connection', 'Edge'] } }],
    },
  },
];
