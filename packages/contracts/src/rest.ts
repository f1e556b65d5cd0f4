// Typed REST operation signatures derived from the openapi-typescript output, one per operationId.
import type { operations } from './generated/openapi.js';

/** Every operationId of openapi/openapi.yaml. */
export type OperationId = keyof operations;

type Operation<Id extends OperationId> = operations[Id];
// An operation without path or query parameters gets {} (so reading an undeclared parameter does not compile).
type OrEmpty<T> = [T] extends [never] ? Record<never, never> : [T] extends [undefined] ? Record<never, never> : T;
type JsonContent<T> = T extends { content: { 'application/json': infer Body } } ? Body : undefined;

/** Path parameters of an operation (after validation and coercion by the contract). */
export type PathParams<Id extends OperationId> = OrEmpty<NonNullable<Operation<Id>['parameters']['path']>>;
/** Query parameters of an operation (after validation and coercion by the contract). */
export type QueryParams<Id extends OperationId> = OrEmpty<NonNullable<Operation<Id>['parameters']['query']>>;
type BodyOf<Id extends OperationId> = JsonContent<NonNullable<Operation<Id>['requestBody']>>;
/** The JSON request body of an operation: `undefined` when it takes none, `| undefined` when the body is optional. */
export type RequestBody<Id extends OperationId> = undefined extends Operation<Id>['requestBody'] ? BodyOf<Id> | undefined : BodyOf<Id>;

type Responses<Id extends OperationId> = Operation<Id>['responses'];
/** Status codes an operation declares. */
export type ResponseStatus<Id extends OperationId> = keyof Responses<Id> & number;
/** The JSON body the contract declares for one status of an operation (`undefined` for bodiless ones). */
export type ResponseBody<Id extends OperationId, Status extends ResponseStatus<Id>> = JsonContent<Responses<Id>[Status]>;

/** What a handler returns: one of the declared statuses with exactly its declared body. */
export type OperationResult<Id extends OperationId> = {
  [Status in ResponseStatus<Id>]: {
    status: Status;
    body: ResponseBody<Id, Status>;
    headers?: Record<string, string>;
  };
}[ResponseStatus<Id>];

/** The validated input of one operation. */
export interface OperationInput<Id extends OperationId> {
  params: PathParams<Id>;
  query: QueryParams<Id>;
  body: RequestBody<Id>;
}

/** A route implementation typed from the contract: a wrong input or output shape does not compile. */
export type OperationHandler<Id extends OperationId, Context> = (input: OperationInput<Id>, context: Context) => Promise<OperationResult<Id>>;

/** Implementations keyed by operationId; each one is checked against its own operation. */
export type OperationHandlers<Context> = { [Id in OperationId]?: OperationHandler<Id, Context> };
