// The naming rule of prisma/schema.prisma: every column is its field's name in snake_case (`@map`), every table its
// model's plural in snake_case. The SQL reader's hand-written reads name columns by it; `pnpm contracts:check` fails on
// a field that breaks it (scripts/contracts/storage.ts), so a new column is found without a list to keep.

/** The column of a model field: `emailVerifiedAt` → `email_verified_at`. */
export const columnOf = (field: string): string => field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
