// How the contracts' fields meet the Prisma model where their names differ: every other input field is stored as it is,
// under its own name (a field added to a contract input and to the model needs no code). Read by the services and by
// `pnpm contracts:check`, which fails on a contract field that is neither a column, nor listed here, nor resolved.
/** Model → the input fields the domain stores by hand, under another name or not at all (a password → its hash). */
export const STORED_BY_HAND = {
  User: ['password'],
} as const satisfies Record<string, readonly string[]>;

/** Model → the fields of its REST representation that have no column of their name (computed from one that does). */
export const COMPUTED_FIELDS = {
  User: ['emailVerified'],
} as const satisfies Record<string, readonly string[]>;

type ByHand<Model> = Model extends keyof typeof STORED_BY_HAND ? (typeof STORED_BY_HAND)[Model][number] : never;

/** The fields of `input` that are stored under their own name: all of them but the model's STORED_BY_HAND. */
export function storedAsIs<Model extends string, Input extends object>(model: Model, input: Input): Omit<Input, ByHand<Model>> {
  const byHand: readonly string[] = (STORED_BY_HAND as Record<string, readonly string[]>)[model] ?? [];
  return Object.fromEntries(Object.entries(input).filter(([field]) => !byHand.includes(field))) as Omit<Input, ByHand<Model>>;
}
