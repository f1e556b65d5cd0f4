// Deprecated REST operations and parameters at run time (SPEC §6): their Deprecation, Sunset and Link answer headers.
import type { FastifyReply, FastifyRequest, onSendHookHandler, RouteOptions } from 'fastify';
import type { DeprecationDates, DeprecationOverride } from '../config/config.js';
import type { OpenapiDocument } from '../contract/openapi-contract.js';

/** The three headers, written once at start: a deprecated operation's answer only copies them. */
export interface DeprecationHeaders {
  deprecation: string;
  sunset: string;
  link: string;
}

interface OperationDeprecation {
  operation?: DeprecationHeaders;
  /** Deprecated parameters: the headers are sent when the request carries one. */
  parameters: { name: string; in: 'query' | 'header'; headers: DeprecationHeaders }[];
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

function dayStart(day: string, what: string): Date {
  const date = new Date(`${day}T00:00:00Z`);
  if (!DAY.test(day) || Number.isNaN(date.getTime())) throw new Error(`${what}: not a date (YYYY-MM-DD): ${day}`);
  return date;
}

/**
 * RFC 9745's `Deprecation: @<unix seconds>` of `x-deprecated-at` (the start of that UTC day), else of the sunset day
 * (a contract that does not say when it deprecated something: the header still says that it is); RFC 8594's `Sunset`
 * (the HTTP-date of the sunset day); and the changelog as the `deprecation` link.
 */
export function deprecationHeaders(dates: DeprecationDates, changelogUrl: string, what: string): DeprecationHeaders {
  const sunset = dayStart(dates.sunset, `${what} x-sunset`);
  const since = dates.deprecatedAt ? dayStart(dates.deprecatedAt, `${what} x-deprecated-at`) : sunset;
  return {
    deprecation: `@${Math.floor(since.getTime() / 1000)}`,
    sunset: sunset.toUTCString(),
    link: `<${changelogUrl}>; rel="deprecation"`,
  };
}

type Parameter = { name?: string; in?: string; deprecated?: boolean; 'x-sunset'?: string; 'x-deprecated-at'?: string; $ref?: string };
type Operation = { operationId?: string; deprecated?: boolean; 'x-sunset'?: string; 'x-deprecated-at'?: string; parameters?: Parameter[] };

const datesOf = (item: { 'x-sunset'?: string; 'x-deprecated-at'?: string }): DeprecationDates | undefined =>
  item['x-sunset'] ? { sunset: item['x-sunset'], ...(item['x-deprecated-at'] ? { deprecatedAt: item['x-deprecated-at'] } : {}) } : undefined;

/**
 * The deprecations openapi.yaml declares (`deprecated: true` with `x-sunset: YYYY-MM-DD`, optionally
 * `x-deprecated-at`), by operationId, with `overrides` laid over them. A deprecation without `x-sunset` has no date to
 * announce: `pnpm contracts:check` refuses it, and it sends no header here.
 */
export function contractDeprecations(
  document: OpenapiDocument,
  overrides: Record<string, DeprecationOverride> = {},
): Map<string, DeprecationOverride> {
  const components = (document as { components?: { parameters?: Record<string, Parameter> } }).components?.parameters ?? {};
  const resolve = (parameter: Parameter) => (parameter.$ref ? components[parameter.$ref.split('/').pop()!] : parameter);
  // bound: deprecations of the contract and the configuration, built at start
  const table = new Map<string, DeprecationOverride>();
  for (const item of Object.values(document.paths)) {
    const shared = ((item as { parameters?: Parameter[] }).parameters ?? []).map(resolve);
    for (const operation of Object.values(item) as Operation[]) {
      if (!operation?.operationId) continue;
      const entry: DeprecationOverride = {};
      const dates = operation.deprecated ? datesOf(operation) : undefined;
      if (dates) entry.operation = dates;
      for (const parameter of [...shared, ...(operation.parameters ?? []).map(resolve)]) {
        const parameterDates = parameter?.deprecated ? datesOf(parameter) : undefined;
        if (!parameterDates || !parameter?.name || (parameter.in !== 'query' && parameter.in !== 'header')) continue;
        (entry.parameters ??= {})[parameter.name] = { ...parameterDates, in: parameter.in };
      }
      if (entry.operation || entry.parameters) table.set(operation.operationId, entry);
    }
  }
  for (const [operationId, override] of Object.entries(overrides)) {
    const entry = table.get(operationId) ?? {};
    table.set(operationId, {
      ...entry,
      ...(override.operation ? { operation: override.operation } : {}),
      parameters: { ...entry.parameters, ...override.parameters },
    });
  }
  return table;
}

function setHeaders(reply: FastifyReply, headers: DeprecationHeaders): void {
  // A Link the handler set (another relation) is kept beside the changelog's.
  const link = reply.getHeader('link');
  reply
    .header('deprecation', headers.deprecation)
    .header('sunset', headers.sunset)
    .header('link', link === undefined ? headers.link : `${String(link)}, ${headers.link}`);
}

function deprecationHook(deprecation: OperationDeprecation): onSendHookHandler {
  const { operation, parameters } = deprecation;
  // Callback form: nothing to await.
  return (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: Error | null, payload?: unknown) => void) => {
    if (operation) setHeaders(reply, operation);
    else {
      const query = request.query as Record<string, unknown> | undefined;
      const used = parameters.find((parameter) =>
        parameter.in === 'query' ? query?.[parameter.name] !== undefined : request.headers[parameter.name.toLowerCase()] !== undefined,
      );
      if (used) setHeaders(reply, used.headers);
    }
    done(null, payload);
  };
}

/**
 * `withDeprecation(operationId, route)`: the route's options with the deprecation hook added to its `onSend`, for the
 * operations that have something deprecated; the others are returned as they are (no hook, no work per request).
 */
export function deprecationHooks(document: OpenapiDocument, changelogUrl: string, overrides?: Record<string, DeprecationOverride>) {
  // bound: one per deprecated operation, built at start
  const hooks = new Map<string, onSendHookHandler>();
  for (const [operationId, entry] of contractDeprecations(document, overrides)) {
    const what = `openapi.yaml ${operationId}`;
    hooks.set(
      operationId,
      deprecationHook({
        ...(entry.operation ? { operation: deprecationHeaders(entry.operation, changelogUrl, what) } : {}),
        parameters: Object.entries(entry.parameters ?? {}).map(([name, dates]) => ({
          name,
          in: dates.in,
          headers: deprecationHeaders(dates, changelogUrl, `${what} parameter ${name}`),
        })),
      }),
    );
  }
  return function withDeprecation<T extends Partial<RouteOptions>>(operationId: string, route: T): T {
    const hook = hooks.get(operationId);
    if (!hook) return route;
    const onSend = [route.onSend ?? []].flat() as onSendHookHandler[];
    return { ...route, onSend: [...onSend, hook] };
  };
}
