// Generates a TypeScript SDK from an OpenAPI document with @hey-api/openapi-ts, as a consumer of the API would:
//   node scripts/consumers/generate-sdk.mjs <openapi.json path or URL> <output directory>
// (the fetch client, its SDK functions and types; used by apps/api/test/consumers/generated-sdk.test.ts and the README).
import { createClient } from '@hey-api/openapi-ts';

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  console.error('usage: node scripts/consumers/generate-sdk.mjs <openapi.json path or URL> <output directory>');
  process.exit(2);
}
await createClient({
  input,
  output: { path: output },
  plugins: ['@hey-api/client-fetch', '@hey-api/sdk', '@hey-api/typescript'],
  logs: { level: 'silent' },
});
