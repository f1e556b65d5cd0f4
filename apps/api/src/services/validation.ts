// Field rules of SPEC §1, for both doors: openapi.yaml's input schemas (and the field rules they reference, each declared
// once) compiled with the REST door's Ajv setup (json-schema.ts), so REST and GraphQL refuse the same value with the same
// field path and the same words. No rule is written here: a rule changed in the contract changes both doors.
import type { components } from '@users-posts/contracts';
import { AppError } from '../errors/app-error.js';
import { fieldErrors } from '../errors/ajv.js';
import { contractAjv, withStorableText, type Validate } from '../contract/json-schema.js';
import { loadOpenapi } from '../contract/openapi-contract.js';

type Schemas = components['schemas'];
/** The contract's request-body schemas (`CreateUserInput`, …): what the domain's writes take. */
export type InputSchema = { [Name in keyof Schemas]: Name extends `${string}Input` ? Name : never }[keyof Schemas];
/** The value of an input schema, as the contract's generated types say. */
export type ContractInput<Name extends InputSchema> = Schemas[Name];
/**
 * An input as a door hands it over, before validation: GraphQL may send an explicit null for any optional field, which
 * the contract refuses where it is not allowed (the same verdict as REST's for a null in JSON).
 */
export type Unvalidated<T> = { [Field in keyof T]?: T[Field] | null };

const ajv = contractAjv('exact');
// bound: the contract's input schemas, a fixed set
const validators = new Map<InputSchema, Validate>();

function validatorOf(name: InputSchema): Validate {
  let validate = validators.get(name);
  if (!validate) {
    const all = loadOpenapi().document.components;
    validate = withStorableText(() => ajv.compile({ $ref: `#/components/schemas/${name}`, components: all }));
    validators.set(name, validate);
  }
  return validate;
}

/**
 * Inputs a door has already validated against an input schema with this same Ajv setup (the REST route's contract
 * validation of its body): the domain does not run the same schema over the same object a second time.
 */
const validatedAs = new WeakMap<object, InputSchema>();

/** Records that `input` passed the contract's schema `name` at the door (REST: the route's body validation). */
export function markValidated(input: unknown, name: InputSchema): void {
  if (typeof input === 'object' && input !== null) validatedAs.set(input, name);
}

/** Checks `input` against the contract's schema `name`; throws one VALIDATION_FAILED naming every failing field. */
export function validateInput<Name extends InputSchema>(name: Name, input: unknown): asserts input is ContractInput<Name> {
  if (typeof input === 'object' && input !== null && validatedAs.get(input) === name) return;
  const validate = validatorOf(name);
  if (!validate(input)) throw new AppError('VALIDATION_FAILED', 'Validation failed', fieldErrors(validate.errors ?? []));
}

type SchemaObject = { $ref?: string; type?: string | string[]; properties?: Record<string, SchemaObject>; anyOf?: SchemaObject[] };

function resolved(schema: SchemaObject): SchemaObject {
  const schemas = (loadOpenapi().document.components as { schemas: Record<string, SchemaObject> }).schemas;
  return schema.$ref ? resolved(schemas[schema.$ref.split('/').at(-1)!]!) : schema;
}

/** The fields of an input schema that accept null: what a full replacement (PUT) sets to null when they are left out. */
export function nullableFields<Name extends InputSchema>(name: Name): (keyof ContractInput<Name> & string)[] {
  const properties = resolved({ $ref: `#/components/schemas/${name}` }).properties ?? {};
  const acceptsNull = (schema: SchemaObject): boolean => {
    const field = resolved(schema);
    return (Array.isArray(field.type) ? field.type.includes('null') : field.type === 'null') || (field.anyOf ?? []).some(acceptsNull);
  };
  return Object.keys(properties).filter((field) => acceptsNull(properties[field]!)) as (keyof ContractInput<Name> & string)[];
}
