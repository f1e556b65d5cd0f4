// Who sees a private field (SPEC §3.1): the contracts declare which fields are private (PRIVATE_FIELDS, generated from
// `@private` / `x-private`); this module is the one rule both doors apply to them (rest/representations.ts,
// graphql/schema/directives/private.ts) and that the users service applies to search and sort.
import { PRIVATE_FIELDS } from '@users-posts/contracts';
import { canActFor, type Principal } from '../auth/principal.js';

/** The types that have private fields, each with the user its object belongs to: a new one fails the type check here. */
const OWNER_OF = {
  User: (user: { id: number }) => user.id,
} satisfies { [Type in keyof typeof PRIVATE_FIELDS]: (object: never) => number };

export type PrivateType = keyof typeof PRIVATE_FIELDS;
type OwnedObject<Type extends PrivateType> = Parameters<(typeof OWNER_OF)[Type]>[0];

/** Objects a write just made for its caller (a sign-up's new account), answered in full to that caller alone. */
const madeForCaller = new WeakSet<object>();

/**
 * Marks `object` as made for the caller of this request: an anonymous sign-up is answered with the new account's own
 * e-mail. The mark is on this object only, which no other request holds: a later read of the same row is not marked.
 */
export function madeForTheCaller<T extends object>(object: T): T {
  madeForCaller.add(object);
  return object;
}

/** Whether `viewer` may read the private fields of `object`: its owner, an ADMIN, or a signed (service) request. */
export function mayReadPrivate<Type extends PrivateType>(viewer: Principal, type: Type, object: OwnedObject<Type>): boolean {
  return madeForCaller.has(object) || canActFor(viewer, OWNER_OF[type](object));
}

/** Whether `viewer` may read every object's private fields, and so search and sort by them: ADMINs and signed requests. */
export function mayReadEveryonesPrivate(viewer: Principal): boolean {
  return viewer.kind !== 'anonymous' && viewer.role === 'ADMIN';
}

/** Whether the contracts declare private fields on the type named `name`. */
export function isPrivateType(name: string): name is PrivateType {
  return Object.hasOwn(PRIVATE_FIELDS, name);
}

/** The private field names of a type (`email`, …). */
export function privateFieldsOf(type: PrivateType): ReadonlySet<string> {
  return new Set(Object.keys(PRIVATE_FIELDS[type]));
}

/** What a caller who may not read a private field gets in its place: `""` for a required string, else null. */
export function hiddenValueOf(type: PrivateType, field: string): '' | null {
  return (PRIVATE_FIELDS[type] as Record<string, '' | null>)[field] ?? null;
}

/**
 * The `representation` of `object` as `viewer` may see it: unchanged for those who may read its private fields; else
 * each private field replaced by its hidden value, or left out when that is null (REST's optional properties).
 */
export function asSeenBy<Type extends PrivateType, Representation extends object>(
  viewer: Principal,
  type: Type,
  object: OwnedObject<Type>,
  representation: Representation,
): Representation {
  if (mayReadPrivate(viewer, type, object)) return representation;
  // A new object written field by field, not a copy with fields deleted: `delete` turns an object into a dictionary,
  // which every later read (the response serializer's) pays for; a REST page builds this for each of its rows.
  const hidden = PRIVATE_FIELDS[type] as Record<string, '' | null>;
  const seen: Record<string, unknown> = {};
  for (const field in representation) {
    if (!Object.hasOwn(hidden, field)) seen[field] = (representation as Record<string, unknown>)[field];
    else if (hidden[field] !== null) seen[field] = hidden[field];
  }
  return seen as Representation;
}
