// Response serializers (fast-json-stringify, as Fastify's default) compiled on a route's first answer instead of at start.
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type SerializerFactory = ReturnType<typeof SerializerSelector>;

/**
 * Fastify's own serializer factory, with each route's compile deferred to its first response: compiling every
 * response schema of the contract at start was ~0.08 s of it (profiled), for routes most processes never answer.
 * The serializers are the same functions Fastify would build; a response schema it cannot compile fails that
 * route's first answer instead of the start (CI compiles every one: the suites answer every operation).
 */
export const lazySerializerFactory: SerializerFactory = (externalSchemas, options) => {
  const compile = SerializerSelector()(externalSchemas, options);
  return (route) => {
    let serialize: ((doc: unknown) => string) | undefined;
    return (doc) => (serialize ??= compile(route))(doc);
  };
};
