// GraphQL's spans, when traces are on (plugins/tracing.ts): `graphql.parse`, `graphql.validate`, the operation
// (`query.Name`, `mutation.Name`, `subscription.Name`), the parent of what it runs, and one span per non-trivial field
// (a field with a resolver of its own, e.g. `User.posts`; plain property reads are not traced).
//
// Written here with @envelop/on-resolve rather than with @envelop/opentelemetry: that plugin records each failed
// operation's errors as an exception event holding their messages, and graphql-js echoes a variable that fails
// coercion whole into its message (`Variable "$input" got invalid value { …, password: "…" }`); its resolver spans
// record every field's arguments as JSON and are never ended when a resolver fails; and parse and validate have no
// spans. Here only error codes are recorded, never messages, arguments or variables.
import { useOnResolve } from '@envelop/on-resolve';
import { context, SpanKind, SpanStatusCode, trace, type Context, type Span, type TracerProvider } from '@opentelemetry/api';
import { BREAK, getOperationAST, GraphQLError, print, visit, type DocumentNode } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';

/** The trace context each GraphQL context runs in: the request's, then its operation's (a WeakMap: no field on the context). */
const contexts = new WeakMap<object, Context>();
const contextOf = (graphqlContext: object): Context => {
  let found = contexts.get(graphqlContext);
  if (!found) contexts.set(graphqlContext, (found = context.active()));
  return found;
};

/** A document holding a literal value (an inline argument, a default) may hold a credential: it is not recorded. */
const recordable = new WeakMap<DocumentNode, string | undefined>();
function documentText(document: DocumentNode): string | undefined {
  if (recordable.has(document)) return recordable.get(document);
  let literal = false;
  const found = () => {
    literal = true;
    return BREAK;
  };
  visit(document, { StringValue: found, IntValue: found, FloatValue: found, BooleanValue: found, EnumValue: found });
  const text = literal ? undefined : print(document);
  recordable.set(document, text);
  return text;
}

/** Marks a span failed with the errors' codes only: messages can echo input. */
function markErrors(span: Span, errors: readonly GraphQLError[] | undefined): void {
  if (!errors || errors.length === 0) return;
  // The code the client will see (graphql/transports/errors.ts masks after this): a GraphQL error's own, an application error's
  // (a resolver's AppError carries its kind's), GraphQL's own errors without one (coercion, validation) are the input's.
  const codeOf = (error: GraphQLError) =>
    error.extensions?.code ??
    (error as unknown as { kind?: { graphqlCode?: string } }).kind?.graphqlCode ??
    (error instanceof GraphQLError && (!error.originalError || error.originalError instanceof GraphQLError)
      ? 'BAD_USER_INPUT'
      : 'INTERNAL_SERVER_ERROR');
  const codes = [...new Set(errors.map((error) => String(codeOf(error))))];
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.setAttribute('graphql.error.codes', codes);
}

export function graphqlTracing(provider: TracerProvider): Plugin[] {
  const tracer = provider.getTracer('users-posts-graphql');

  /** Starts the operation's span under the request's and makes it the context of what the operation runs. */
  const startOperation = (document: DocumentNode, operationName: string | null | undefined, graphqlContext: object) => {
    const operation = getOperationAST(document, operationName);
    if (!operation) return undefined;
    const name = operation.name?.value ?? 'anonymous';
    const text = documentText(document);
    const span = tracer.startSpan(
      `${operation.operation}.${name}`,
      {
        kind: SpanKind.INTERNAL,
        attributes: { 'graphql.operation.type': operation.operation, 'graphql.operation.name': name, ...(text ? { 'graphql.document': text } : {}) },
      },
      contextOf(graphqlContext),
    );
    const operationContext = trace.setSpan(contextOf(graphqlContext), span);
    contexts.set(graphqlContext, operationContext);
    return { span, operationContext };
  };

  const steps: Plugin = {
    onParse({ context: graphqlContext }) {
      const span = tracer.startSpan('graphql.parse', {}, contextOf(graphqlContext));
      return ({ result }) => {
        if (result instanceof Error) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      };
    },
    onValidate({ context: graphqlContext }) {
      const span = tracer.startSpan('graphql.validate', {}, contextOf(graphqlContext));
      return ({ valid, result }) => {
        if (!valid) markErrors(span, result as readonly GraphQLError[]);
        span.end();
      };
    },
  };

  const operations: Plugin = {
    onExecute({ args, executeFn, setExecuteFn }) {
      const started = startOperation(args.document, args.operationName, args.contextValue as object);
      if (!started) return;
      const { span, operationContext } = started;
      setExecuteFn((executeArgs) => context.with(operationContext, () => executeFn(executeArgs)));
      return {
        onExecuteDone({ result }) {
          if (isAsyncIterable(result)) {
            return { onNext: ({ result: next }) => markErrors(span, next.errors), onEnd: () => span.end() };
          }
          markErrors(span, result.errors);
          span.end();
          return undefined;
        },
      };
    },
    onSubscribe({ args, subscribeFn, setSubscribeFn }) {
      const started = startOperation(args.document, args.operationName, args.contextValue as object);
      if (!started) return;
      const { span, operationContext } = started;
      setSubscribeFn((subscribeArgs) => context.with(operationContext, () => subscribeFn(subscribeArgs)));
      return {
        onSubscribeError: () => {
          span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
        },
        onSubscribeResult: ({ result }) => {
          if (!isAsyncIterable(result)) {
            markErrors(span, result.errors);
            span.end();
            return undefined;
          }
          return { onNext: ({ result: next }) => markErrors(span, next.errors), onEnd: () => span.end() };
        },
      };
    },
  };

  const fields: Plugin = {
    onPluginInit({ addPlugin }) {
      addPlugin(
        useOnResolve(
          ({ info, context: graphqlContext }) => {
            const span = tracer.startSpan(
              `${info.parentType.name}.${info.fieldName}`,
              { attributes: { 'graphql.field.path': pathOf(info.path) } },
              contextOf(graphqlContext as object),
            );
            return ({ result }) => {
              if (result instanceof Error) markErrors(span, [result as GraphQLError]);
              span.end();
            };
          },
          { skipDefaultResolvers: true },
        ) as Plugin,
      );
    },
  };
  return [steps, operations, fields];
}

/** `users.0.posts` for a resolver path (list indexes as numbers). */
function pathOf(path: { prev: unknown; key: string | number } | undefined): string {
  const keys: (string | number)[] = [];
  for (let at = path; at; at = at.prev as typeof path) keys.unshift(at.key);
  return keys.join('.');
}
