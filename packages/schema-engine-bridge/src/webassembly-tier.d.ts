// Types of webassembly-tier.js (plain JS so the schema-engine bridge can run it without TypeScript).
export function optimiseWebAssemblyFromEnv(env: Record<string, string | undefined>): boolean;
export function keepWebAssemblyOnBaselineCompiler(): void;
