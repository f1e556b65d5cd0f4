// One file that `pnpm codegen` writes (and `pnpm contracts:check` compares with the committed one).
export interface GeneratedFile {
  /** Path relative to the repository root. */
  path: string;
  content: string;
}
