// Exact shapes of users as the tests expect them, from the contracts' field lists: a field added to the contracts and
// the model is expected (null when a test does not give it) without editing every test that pins a user's shape.
import { PRIVATE_FIELDS, REPRESENTATION_FIELDS } from '@users-posts/contracts';
import { Prisma } from '@users-posts/db';

/** What no read may ever load, nor any door answer: the credentials of a user row (stated here, not taken from the code). */
export const CREDENTIAL_FIELDS: readonly string[] = ['passwordHash', 'tokenVersion'];

/** The keys of a user row as the services read it: every column of the model but the credentials, sorted. */
export const publicUserKeys = (): string[] =>
  Object.values(Prisma.UserScalarFieldEnum)
    .filter((field) => !CREDENTIAL_FIELDS.includes(field))
    .sort();

/** Null for every public (not `x-private`) field of a resource's representation: the base of an exact expected shape. */
export function nullRepresentation(resource: keyof typeof REPRESENTATION_FIELDS): Record<string, unknown> {
  const hidden = (PRIVATE_FIELDS as Record<string, Record<string, unknown>>)[resource] ?? {};
  return Object.fromEntries(REPRESENTATION_FIELDS[resource].filter((field) => !(field in hidden)).map((field) => [field, null]));
}
