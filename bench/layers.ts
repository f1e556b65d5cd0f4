// The per-layer cost budget of `pnpm bench:profile`: a V8 CPU profile taken over the inspector while a load runs, its
// samples mapped back through the bundle's source map and attributed to the layer (HTTP, auth, SQL, …) that owns them.
import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const SQL = 'SQL (Prisma, driver, its socket)';

/**
 * The layers of a request, in the order of the table, each with the sources that belong to it: the product's own
 * files (resolved through the source map to `apps/api/src/...`), its packages, the baseline's. A sample belongs to the
 * innermost frame of its stack that some layer claims (self time by owner): Prisma called from a service is SQL, the
 * service's own code is the domain. Keep this list current when a layer is added (docs/benchmarks.md's table reads it).
 */
export const LAYERS: { name: string; sources: RegExp }[] = [
  {
    name: 'logging',
    sources:
      /node_modules\/(pino|pino-std-serializers|sonic-boom|thread-stream|fast-redact|@pinojs\/redact|abstract-logging)\/|\/src\/log-output\.ts/,
  },
  {
    name: 'metrics, tracing, usage',
    sources:
      /node_modules\/(prom-client|@opentelemetry\/[^/]+|@fastify\/otel|tdigest|bintrees)\/|\/src\/plugins\/(metrics|tracing|contract-usage)\.ts|\/src\/graphql\/tracing\.ts/,
  },
  { name: 'ETag, conditional', sources: /\/src\/rest\/conditional\.ts|node_modules\/@fastify\/etag\// },
  { name: 'privacy', sources: /\/src\/rest\/representations\.ts|\/src\/services\/visibility\.ts|\/src\/graphql\/schema\/directives\// },
  {
    name: 'rate limit',
    sources: /node_modules\/(@fastify\/rate-limit|toad-cache)\/|\/src\/rate-limits\/|\/src\/plugins\/rate-limit\.ts|\/src\/http\/rate-bucket\.ts/,
  },
  {
    name: 'auth',
    sources:
      /node_modules\/(@fastify\/jwt|fast-jwt|@fastify\/cookie|cookie|cookie-signature|@fastify\/csrf-protection|@fastify\/csrf|mnemonist|@lukeed\/ms)\/|\/src\/auth\/|\/src\/plugins\/(auth|csrf)\.ts|\/src\/shared-state\/(revocations|known-logins|nonces)\//,
  },
  {
    name: 'response headers',
    sources:
      /node_modules\/(@fastify\/helmet|helmet|@fastify\/cors|vary)\/|\/src\/plugins\/security-headers\.ts|\/src\/http\/vary\.ts|\/src\/rest\/deprecation\.ts/,
  },
  {
    name: 'validation',
    sources:
      /node_modules\/(ajv|ajv-formats|fast-uri|@escape\.tech\/[^/]+|json-schema-traverse|fast-deep-equal)\/|node_modules\/graphql\/validation\/|\/src\/rest\/(validator-compiler|request-body)\.ts|\/src\/graphql\/guards\/|\/src\/contract\/|\/packages\/contracts\//,
  },
  {
    name: 'serialization',
    sources:
      /node_modules\/(fast-json-stringify|@fastify\/fast-json-stringify-compiler|json-schema-ref-resolver)\/|\/src\/rest\/(serializer-compiler|envelope)\.ts/,
  },
  {
    name: SQL,
    sources:
      /node_modules\/(@prisma\/[^/]+|pg|pg-protocol|pg-pool|pg-types|postgres-array|postgres-bytea|postgres-date|postgres-interval|pg-int8|pgpass|split2|@electric-sql\/pglite)\/|\/packages\/db\//,
  },
  {
    name: 'GraphQL engine (Yoga, parse, execute)',
    sources:
      /node_modules\/(graphql|graphql-yoga|@graphql-yoga\/[^/]+|@envelop\/[^/]+|@whatwg-node\/[^/]+|@graphql-tools\/[^/]+|graphql-jit|dset|@repeaterjs\/repeater|graphql-ws|@fastify\/busboy|generate-function|lodash\.[^/]+)\/|\/src\/graphql\/(plugin\.ts|acceleration\/|transports\/|schema\/(context|schema|selection|arguments|mappers|node-ids)\.ts)/,
  },
  {
    name: 'domain, resolvers, handlers',
    sources:
      /\/src\/(services|collections|rest\/routes|graphql\/schema\/resolvers)\/|\/src\/graphql\/schema\/loaders\.ts|node_modules\/dataloader\/|\/bench\/baseline\//,
  },
  {
    name: 'HTTP: Fastify (routing, hooks, reply)',
    sources:
      /node_modules\/(fastify|find-my-way|avvio|light-my-request|fast-querystring|secure-json-parse|@fastify\/[^/]+|content-type|process-warning|safe-regex2|ret|rfdc|fastq|reusify|proxy-addr|forwarded|ipaddr\.js|close-with-grace)\/|\/src\/(http|rest|plugins|errors)\/|\/src\/app\.ts/,
  },
  {
    name: 'HTTP: Node (sockets, parsing, writing)',
    sources: /^node:(_http_\w+|net|events|stream|internal\/(streams|stream_base_commons|http|url|dns|net|buffer|validators|errors))/,
  },
  { name: 'Node: event loop, promises, timers', sources: /^node:/ },
];
/** General-purpose packages whose time belongs to the layer that called them (a cache works for its user). */
const TRANSPARENT = /node_modules\/(lru-cache|tslib|@whatwg-node\/promise-helpers|@fastify\/deepmerge|fast-decode-uri-component)\//;

/** V8's own pseudo-frames: collection, and native time no JavaScript frame owns (llhttp, libuv, compiled code's stubs). */
export const GC = 'garbage collection';
export const NATIVE = 'V8 and native, unattributed';
export const OTHER = 'other JavaScript';
/** The kernel's part of socket writes (see SOCKET_WRITERS). */
export const SOCKET_WRITES = 'kernel: socket reads and writes (system time)';
/** Node's functions that make the write syscalls of a socket (node:internal/stream_base_commons). */
const SOCKET_WRITERS = new Set(['writevGeneric', 'handleWriteReq', 'writeGeneric']);

/** Resolves a frame of a bundled file to its original source through the file's `.map` (scripts/build.mjs writes one). */
class SourceResolver {
  private readonly maps = new Map<string, SourceMap | null>();

  source(frame: CallFrame): string {
    return this.position(frame).source;
  }

  /** The original file and 1-based line of a frame's function. */
  position(frame: CallFrame): { source: string; line: number } {
    if (!frame.url.startsWith('file://')) return { source: frame.url, line: frame.lineNumber + 1 };
    let map = this.maps.get(frame.url);
    if (map === undefined) {
      try {
        map = new SourceMap(JSON.parse(readFileSync(`${fileURLToPath(frame.url)}.map`, 'utf8')));
      } catch {
        map = null; // not bundled (the baseline under tsx, a package Node loads itself): the path is the source
      }
      this.maps.set(frame.url, map);
    }
    const file = { source: fileURLToPath(frame.url), line: frame.lineNumber + 1 };
    if (!map) return file;
    const entry = map.findEntry(frame.lineNumber, frame.columnNumber) as { originalSource?: string; originalLine?: number };
    return entry.originalSource ? { source: entry.originalSource, line: (entry.originalLine ?? 0) + 1 } : file;
  }
}

export interface LayerCosts {
  /** Sampled main-thread milliseconds per layer (idle excluded). */
  byLayer: Map<string, number>;
  /** Sampled milliseconds per function (`name file:line`, its layer), self time: what to open first in a layer. */
  byFunction: Map<string, number>;
  /** Sources no layer claims, by sampled milliseconds (to refine LAYERS). */
  unclaimed: Map<string, number>;
  busyMs: number;
}

/** Self time of the profile's samples, attributed to layers (see LAYERS). */
export function layerCosts(profile: CpuProfile): LayerCosts {
  const resolver = new SourceResolver();
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const layerOfNode = new Map<number, { layer: string; source?: string; where?: string }>();
  const layerOf = (id: number): { layer: string; source?: string; where?: string } => {
    const known = layerOfNode.get(id);
    if (known) return known;
    const frame = nodes.get(id)!.callFrame;
    let found: { layer: string; source?: string; where?: string };
    if (frame.functionName === '(garbage collector)') found = { layer: GC };
    else if (frame.functionName === '(program)') found = { layer: NATIVE };
    else {
      const position = frame.url ? resolver.position(frame) : undefined;
      const up = parent.get(id);
      if (!position && up !== undefined && SOCKET_WRITERS.has(nodes.get(up)!.callFrame.functionName)) {
        // The native call under Node's stream writers is the write(2)/writev(2) itself: the same count per request for
        // every server (strace: one HTTP answer, one statement each), and on loopback it carries the receiver's work.
        found = { layer: SOCKET_WRITES, where: 'write(2), writev(2)' };
        layerOfNode.set(id, found);
        return found;
      }
      if (!position || TRANSPARENT.test(position.source)) {
        // A native function, builtin or general-purpose package: it works for the JavaScript that called it.
        found = up === undefined ? { layer: NATIVE } : layerOf(up);
        layerOfNode.set(id, found);
        return found;
      }
      const { source, line } = position;
      if (source.startsWith('node:')) {
        // Node's own code works for the package that called it: a socket write from pg is SQL, one from the HTTP
        // server Node's. The nearest caller that is not Node's decides when it is the database's driver.
        const caller = callerOutsideNode(id);
        if (caller?.layer === SQL) {
          layerOfNode.set(id, caller);
          return caller;
        }
      }
      const layer = LAYERS.find((candidate) => candidate.sources.test(source));
      const where = `${frame.functionName || '(anonymous)'} ${source.replace(/^.*node_modules\//, '').replace(/^(\.\.\/)+/, '')}:${line}`;
      found = layer ? { layer: layer.name, where } : { layer: OTHER, source, where };
    }
    layerOfNode.set(id, found);
    return found;
  };
  const callerOutsideNode = (id: number): { layer: string } | undefined => {
    for (let up = parent.get(id); up !== undefined; up = parent.get(up)) {
      const frame = nodes.get(up)!.callFrame;
      if (frame.url && !frame.url.startsWith('node:')) return layerOf(up);
    }
    return undefined;
  };
  const byLayer = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const unclaimed = new Map<string, number>();
  let busyUs = 0;
  profile.samples.forEach((id, index) => {
    const frame = nodes.get(id)!.callFrame;
    if (frame.functionName === '(idle)' || frame.functionName === '(root)') return;
    const us = profile.timeDeltas[index] ?? 0;
    busyUs += us;
    const { layer, source, where } = layerOf(id);
    byLayer.set(layer, (byLayer.get(layer) ?? 0) + us / 1000);
    const key = `${where ?? '(native)'} [${layer}]`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us / 1000);
    if (source) unclaimed.set(source, (unclaimed.get(source) ?? 0) + us / 1000);
  });
  return { byLayer, byFunction, unclaimed, busyMs: busyUs / 1000 };
}

/** A process's V8 profiler over its inspector (`node --inspect=HOST:PORT`): start, then stop with the samples since. */
export class InspectorProfiler {
  private nextId = 1;
  private readonly pending = new Map<number, (result: unknown) => void>();

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as { id?: number; result?: unknown; error?: { message: string } };
      if (message.id === undefined) return;
      const resolve = this.pending.get(message.id);
      this.pending.delete(message.id);
      resolve?.(message.error ? new Error(message.error.message) : message.result);
    });
  }

  static async connect(inspectorPort: number): Promise<InspectorProfiler> {
    const targets = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
    const socket = new WebSocket(targets[0]!.webSocketDebuggerUrl);
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    const profiler = new InspectorProfiler(socket);
    await profiler.send('Profiler.enable');
    return profiler;
  }

  async send<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.nextId++;
    const answer = new Promise<unknown>((resolve) => this.pending.set(id, resolve));
    this.socket.send(JSON.stringify({ id, method, params }));
    const result = await answer;
    if (result instanceof Error) throw result;
    return result as T;
  }

  /** Samples `work` every `intervalUs` of the process's main thread; the profile of exactly that window. */
  async during<T>(work: () => Promise<T>, intervalUs = 250): Promise<{ result: T; profile: CpuProfile }> {
    await this.send('Profiler.setSamplingInterval', { interval: intervalUs });
    await this.send('Profiler.start');
    const result = await work();
    const { profile } = await this.send<{ profile: CpuProfile }>('Profiler.stop');
    return { result, profile };
  }

  close(): void {
    this.socket.close();
  }
}
