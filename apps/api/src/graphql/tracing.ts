// GraphQL's spans, when traces are on (plugins/tracing.ts): `graphql.parse` and `graphql.validate`, the operation
// (`query.Name`, `mutation.Name`, `subscription.Name`: @envelop/opentelemetry), and one span per non-trivial field
// (a field with a resolver of its own, e.g. `User.posts`; plain property reads are not traced).
//
// Written here, beside @envelop/opentelemetry: its parse and validate steps have no spans, and its resolver spans
// record each field's arguments as JSON (`createUser(input: { password })` would put a password in the trace store)
// and are never ended when a resolver fails.
import { getCurrentOtelContext, useOpenTelemetry } from '@envelop/opentelemetry';
import { useOnResolve } from '@envelop/on-resolve';
import { SpanStatusCode, type TracerProvider } from '@opentelemetry/api';
import type { Plugin } from 'graphql-yoga';

export function graphqlTracing(provider: TracerProvider): Plugin[] {
  const tracer = provider.getTracer('users-posts-graphql');
  const steps: Plugin = {
    onParse({ context }) {
      const span = tracer.startSpan('graphql.parse', {}, getCurrentOtelContext(context));
      return ({ result }) => {
        if (result instanceof Error) span.setStatus({ code: SpanStatusCode.ERROR, message: result.message });
        span.end();
      };
    },
    onValidate({ context }) {
      const span = tracer.startSpan('graphql.validate', {}, getCurrentOtelContext(context));
      return ({ valid }) => {
        if (!valid) span.setStatus({ code: SpanStatusCode.ERROR, message: 'invalid document' });
        span.end();
      };
    },
  };
  const fields: Plugin = {
    onPluginInit({ addPlugin }) {
      addPlugin(
        useOnResolve(
          ({ info, context }) => {
            const span = tracer.startSpan(`${info.parentType.name}.${info.fieldName}`, { attributes: { 'graphql.field.path': pathOf(info.path) } }, getCurrentOtelContext(context));
            return ({ result }) => {
              if (result instanceof Error) span.setStatus({ code: SpanStatusCode.ERROR, message: result.message });
              span.end();
            };
          },
          { skipDefaultResolvers: true },
        ) as Plugin,
      );
    },
  };
  return [
    steps,
    // The operation's span, made the parent of what runs inside it (its document is kept unless it has inline
    // arguments, which may be credentials; variables and results are never recorded).
    useOpenTelemetry({ resolvers: false, variables: false, result: false, document: true }, provider, undefined, undefined, 'users-posts-graphql') as Plugin,
    fields,
  ];
}

/** `users.0.posts` for a resolver path (list indexes as numbers). */
function pathOf(path: { prev: unknown; key: string | number } | undefined): string {
  const keys: (string | number)[] = [];
  for (let at = path; at; at = at.prev as typeof path) keys.unshift(at.key);
  return keys.join('.');
}
