// The stores a request can create or grow, each with the bound it declares (SPEC §0.2): one registry per app, read by
// docs/bounds.md's drift test and by test/bounds/stores.test.ts, which drives a hostile client into every store named here.
import type { FastifyInstance } from 'fastify';

/** Where a store keeps what it holds. */
export type StoreHome = 'memory' | 'database' | 'redis';

/** What a store holds now (per owner: the largest owner's): entries, and bytes where the store measures them. */
export interface StoreSize {
  entries: number;
  bytes?: number | undefined;
}

/** A store and its bound, declared once where the store is built. */
export interface StoreDeclaration {
  /** Unique, kebab-case: the row of docs/bounds.md. */
  name: string;
  home: StoreHome;
  /**
   * Whose entries `maxEntries` bounds: the whole store (all clients together), or each owner's (a user's or client's
   * rows of a table, whose total grows only with the owners: accounts are themselves rate limited at sign-up).
   */
  scope: 'store' | 'owner';
  /** Entries at most, in the store or per owner (`scope`). */
  maxEntries: number;
  /** Bytes at most, where the store measures them (caches); else the entry bound times a fixed entry size. */
  maxBytes?: number | undefined;
  /** How long an entry lives at most (ms); undefined: until the bound or an explicit removal. */
  ttlMs?: number | undefined;
  /** One client's share, in words (what bounds what one address or account can add). */
  perClient: string;
  /** What happens at the bound: whom it refuses, or what it evicts. */
  atBound: string;
  /** The configuration variables that set its bounds (config/config-schema.ts), empty when the bound is fixed in code. */
  config: readonly string[];
  /** Its size now. */
  size(): StoreSize | Promise<StoreSize>;
}

export class StoreRegistry {
  // bound: the stores the code declares, at start
  private readonly byName = new Map<string, StoreDeclaration>();

  /** Declares a store (once per app: a second declaration of a name is a programming error). */
  declare(declaration: StoreDeclaration): void {
    if (this.byName.has(declaration.name)) throw new Error(`store ${declaration.name} declared twice`);
    this.byName.set(declaration.name, declaration);
  }

  list(): StoreDeclaration[] {
    return [...this.byName.values()];
  }

  get(name: string): StoreDeclaration | undefined {
    return this.byName.get(name);
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every store a request can grow, with its declared bound (bounds/stores.ts). */
    stores: StoreRegistry;
  }
}

/** Decorates `app.stores` (app.ts, before every plugin that declares one). */
export function decorateStores(app: FastifyInstance): void {
  app.decorate('stores', new StoreRegistry());
}
