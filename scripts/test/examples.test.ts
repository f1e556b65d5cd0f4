// The examples check (scripts/contracts/examples.ts) on a contract fixture edited per test.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from '@jest/globals';
import { parseYaml } from '../contracts/yaml.js';
import { collectExamples, exampleProblems } from '../contracts/examples.js';

// The fixtures are edited freely as plain objects.
const parse = (text: string): any => parseYaml(text);

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');
const fixture = readFileSync(path.join(here, 'fixtures/examples/openapi.yaml'), 'utf8');

/** Problems of the fixture with `change` applied to its parsed form. */
function problemsAfter(change: (doc: any) => void): string[] {
  const doc = parse(fixture);
  change(doc);
  return exampleProblems(doc, repoRoot);
}

describe('exampleProblems', () => {
  test('finds the example of every place that has one, and the fixture is valid', () => {
    expect(collectExamples(parse(fixture)).map((example) => example.at)).toEqual([
      '/components/schemas/User/example',
      '/components/schemas/User/properties/id/example',
      '/components/schemas/User/properties/email/examples/0',
      '/components/headers/X-RateLimit-Remaining/example',
      '/paths/~1users/get/parameters/0/example',
      '/paths/~1users/get/responses/200/content/application~1json/example',
      '/paths/~1users/post/requestBody/content/application~1json/examples/ada/value',
      '/paths/~1users/post/requestBody/content/application~1json/examples/grace',
    ]);
    expect(problemsAfter(() => undefined)).toEqual([]);
  });

  test('a schema example that breaks a constraint is named by its pointer', () => {
    expect(problemsAfter((doc) => (doc.components.schemas.User.properties.id.example = 0))).toEqual([
      '/components/schemas/User/properties/id/example: does not validate against /components/schemas/User/properties/id: (the value) must be >= 1',
    ]);
    expect(problemsAfter((doc) => (doc.components.schemas.User.properties.email.examples = ['ada@example.com', 'ada']))).toEqual([
      '/components/schemas/User/properties/email/examples/1: does not validate against /components/schemas/User/properties/email: (the value) must match format "email"',
    ]);
  });

  test("a contract edit that leaves a media type's example behind is caught, through $refs and a cycle", () => {
    // The edit a team makes: a new required property; the response example (a list of Users, each with friends) lacks it.
    const problems = problemsAfter((doc) => {
      doc.components.schemas.User.required.push('bio');
      doc.components.schemas.User.properties.bio = { type: 'string' };
      doc.paths['/users'].get.responses['200'].content['application/json'].example[0].friends.push({
        id: 3,
        name: 'Alan',
        email: 'alan@example.com',
        bio: 'x',
      });
    });
    expect(problems).toEqual([
      "/components/schemas/User/example: does not validate against /components/schemas/User: (the value) must have required property 'bio'",
      '/paths/~1users/get/responses/200/content/application~1json/example: does not validate against ' +
        "/paths/~1users/get/responses/200/content/application~1json/schema: /0 must have required property 'bio'",
    ]);
  });

  test('an example of an `examples` map, inline or by $ref, is checked against the media type schema', () => {
    const problems = problemsAfter((doc) => {
      doc.paths['/users'].post.requestBody.content['application/json'].examples.ada.value.nickname = 'ada';
      doc.components.examples.Grace.value.email = 'grace';
    });
    expect(problems).toEqual([
      '/paths/~1users/post/requestBody/content/application~1json/examples/ada/value: does not validate against ' +
        '/paths/~1users/post/requestBody/content/application~1json/schema: (the value) must NOT have additional properties',
      '/paths/~1users/post/requestBody/content/application~1json/examples/grace: does not validate against ' +
        '/paths/~1users/post/requestBody/content/application~1json/schema: /email must match format "email"',
    ]);
  });

  test('parameters and headers are coerced from text as the server does; bodies are not', () => {
    expect(problemsAfter((doc) => (doc.paths['/users'].get.parameters[0].example = '20'))).toEqual([]);
    expect(problemsAfter((doc) => (doc.paths['/users'].get.parameters[0].example = '500'))).toEqual([
      '/paths/~1users/get/parameters/0/example: does not validate against /paths/~1users/get/parameters/0/schema: (the value) must be <= 100',
    ]);
    expect(problemsAfter((doc) => (doc.components.headers['X-RateLimit-Remaining'].example = 'many'))).toEqual([
      '/components/headers/X-RateLimit-Remaining/example: does not validate against /components/headers/X-RateLimit-Remaining/schema: (the value) must be integer',
    ]);
    expect(problemsAfter((doc) => (doc.components.schemas.User.properties.id.example = '1'))).toEqual([
      '/components/schemas/User/properties/id/example: does not validate against /components/schemas/User/properties/id: (the value) must be integer',
    ]);
  });
});
