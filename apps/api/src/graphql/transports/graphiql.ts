// GraphiQL for browsers (GET /graphql with Accept: text/html) as a page of ~1 KB naming its assets, and the assets
// themselves (GraphiQL's script and style and Monaco's three workers, from @graphql-yoga/render-graphiql; two small
// start-up scripts of ours) as static files under /graphiql/<version>/: each compressed once, on its first request
// (brotli and gzip, on libuv's thread pool), then answered from memory with an immutable cache header and an ETag.
//
// Issue 31: the page @graphql-yoga/render-graphiql renders inlines all of it, 9.1 MB uncompressed with neither cache
// header nor validator, ~187 ms of CPU per anonymous request: four fetchers took another client's median read from
// 7.7 ms to 1.1 s. By hand: no kept library serves in-memory assets pre-compressed (@fastify/static serves files from
// disk, and the assets exist only as strings of the library's module); the negotiation is `negotiator`'s.
//
// The page itself (issue 40, from the third round) has a strong ETag, the SHA-256 of its bytes computed once per page
// (its options are the server's, the same for every request), and `Cache-Control: no-cache`: a browser revalidates it
// with If-None-Match and gets a 304 with no body.
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify';
import Negotiator from 'negotiator';

const compressors = {
  // Quality 9: within a few per cent of 11's size for GraphiQL's script, in a tenth of its time (~1 s once).
  br: (body: Buffer) => promisify(brotliCompress)(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 9 } }),
  gzip: (body: Buffer) => promisify(gzip)(body, { level: 9 }),
};
type Encoding = keyof typeof compressors | 'identity';

interface Asset {
  type: string;
  body: Buffer;
  compressed: Partial<Record<keyof typeof compressors, Promise<Buffer>>>;
}

/** Where the page finds Monaco's workers, set before GraphiQL's script runs (an inline script would need 'unsafe-inline'). */
const ENVIRONMENT_JS = `(function () {
  var base = document.currentScript.src.replace(/[^/]*$/, '');
  self.MonacoEnvironment = {
    globalAPI: false,
    getWorkerUrl: function (moduleId, label) {
      return base + (label === 'editorWorkerService' ? 'editor' : label) + '.worker.js';
    },
  };
})();
`;

/** Renders GraphiQL with the options the page carries in a JSON block (data, not a script). */
const START_JS = `YogaGraphiQL.renderYogaGraphiQL(
  document.querySelector('#root'),
  JSON.parse(document.getElementById('graphiql-options').textContent),
);
`;

export interface GraphiQL {
  /** The page, with `options` (title, default query, …) for GraphiQL; loads the assets on the first call. */
  page(options: object): Promise<string>;
  /** The route of the assets (GET /graphiql/:version/:file), and the page's validator on the GET route of `endpoint`. */
  register(app: FastifyInstance, endpoint?: string): void;
}

/** A page as sent, and its validator. */
interface Page {
  html: string;
  bytes: Buffer;
  etag: string;
}

/** Whether an If-None-Match header names `etag` (a list, `*`, weak forms: GET compares weakly, RFC 9110 §13.1.2). */
function matchesIfNoneMatch(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return [header]
    .flat()
    .flatMap((value) => value.split(','))
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .some((tag) => tag === '*' || tag === etag);
}

interface Loaded {
  version: string;
  assets: Map<string, Asset>;
}

/** The bytes and type of a `data:<type>;base64,<data>` URL (the library's favicon, ~150 KB inline otherwise). */
function fromDataUrl(url: string): [type: string, body: Buffer] {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (!match) throw new Error('GraphiQL favicon: not a base64 data: URL');
  return [match[1]!, Buffer.from(match[2]!, 'base64')];
}

/** JSON safe inside a <script> block: no `</script>` or `<!--` can close or open anything. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

/** GraphiQL's assets from @graphql-yoga/render-graphiql, with the version that names them. */
async function load(): Promise<Loaded> {
  const graphiql = await import('@graphql-yoga/render-graphiql/graphiql');
  const files: Record<string, [type: string, content: string]> = {
    'environment.js': ['text/javascript; charset=utf-8', ENVIRONMENT_JS],
    'graphiql.js': ['text/javascript; charset=utf-8', graphiql.js],
    'start.js': ['text/javascript; charset=utf-8', START_JS],
    'graphiql.css': ['text/css; charset=utf-8', graphiql.css],
    'editor.worker.js': ['text/javascript; charset=utf-8', graphiql.editorWorkerService],
    'json.worker.js': ['text/javascript; charset=utf-8', graphiql.jsonWorker],
    'graphql.worker.js': ['text/javascript; charset=utf-8', graphiql.graphqlWorker],
  };
  const assets = new Map<string, Asset>(
    Object.entries(files).map(([name, [type, content]]) => [name, { type, body: Buffer.from(content), compressed: {} }]),
  );
  const [faviconType, favicon] = fromDataUrl(graphiql.favicon);
  assets.set('favicon.ico', { type: faviconType, body: favicon, compressed: {} });
  // The version in every asset's path: new assets are a new URL, so a browser may keep these for good.
  const hash = createHash('sha256');
  for (const [name, asset] of assets) hash.update(name).update(asset.body);
  return { version: hash.digest('hex').slice(0, 16), assets };
}

/**
 * GraphiQL as a page and its assets. The ~9 MB module of assets is imported on the first page or asset request, not
 * at start (a third of start-up parse and memory otherwise).
 */
export function graphiql(): GraphiQL {
  let loaded: Promise<Loaded> | undefined;
  const assets = () => (loaded ??= load());
  // The pages rendered, by their options (the server's own: one entry in practice), with their validators.
  // bound: the server's own page options, one entry in practice
  const pages = new Map<string, Page>();
  const render = (version: string, options: object) => {
    const base = `/graphiql/${version}`;
    const title = 'title' in options ? String(options.title).replace(/[<>&"]/g, '') : 'GraphiQL';
    return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${title}</title>
    <link rel="icon" href="${base}/favicon.ico" />
    <link rel="stylesheet" href="${base}/graphiql.css" />
  </head>
  <body id="body" class="no-focus-outline">
    <noscript>You need to enable JavaScript to run GraphiQL.</noscript>
    <div id="root"></div>
    <script type="application/json" id="graphiql-options">${scriptJson(options)}</script>
    <script src="${base}/environment.js"></script>
    <script src="${base}/graphiql.js"></script>
    <script src="${base}/start.js"></script>
  </body>
</html>
`;
  };
  /** Adds the page's validator to its answer, and answers a revalidation that names it with a 304. */
  const validate: onSendHookHandler = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (request.method !== 'GET' || !Buffer.isBuffer(payload) || !String(reply.getHeader('content-type') ?? '').startsWith('text/html')) {
      return payload;
    }
    const page = [...pages.values()].find((each) => each.bytes.equals(payload));
    if (!page) return payload;
    reply.header('etag', page.etag).header('cache-control', 'no-cache');
    if (!matchesIfNoneMatch(request.headers['if-none-match'], page.etag)) return payload;
    reply.code(304);
    return null;
  };
  return {
    async page(options) {
      const { version } = await assets();
      const key = scriptJson(options);
      let page = pages.get(key);
      if (!page) {
        const html = render(version, options);
        const bytes = Buffer.from(html);
        page = { html, bytes, etag: `"${createHash('sha256').update(bytes).digest('base64url')}"` };
        pages.set(key, page);
      }
      return page.html;
    },

    register(app, endpoint = '/graphql') {
      // Only on the endpoint's route (where Yoga renders the page), not on every answer of the server.
      app.addHook('onRoute', (route) => {
        if (route.url !== endpoint || ![route.method].flat().includes('GET')) return;
        route.onSend = [...[route.onSend ?? []].flat(), validate];
      });
      app.get<{ Params: { version: string; file: string } }>('/graphiql/:version/:file', async (request, reply) => {
        const { version, assets: files } = await assets();
        const asset = request.params.version === version ? files.get(request.params.file) : undefined;
        if (!asset) return reply.code(404).type('text/plain; charset=utf-8').send('Not found');
        // Among the encodings the client accepts (q > 0), the smallest: brotli, then gzip.
        const accepted = new Negotiator(request.raw).encodings(['br', 'gzip', 'identity']);
        const encoding: Encoding = (['br', 'gzip'] as const).find((candidate) => accepted.includes(candidate)) ?? 'identity';
        const etag = `"${version}-${encoding}"`;
        reply.header('cache-control', 'public, max-age=31536000, immutable').header('vary', 'accept-encoding').header('etag', etag).type(asset.type);
        if (request.headers['if-none-match'] === etag) return reply.code(304).send();
        if (encoding === 'identity') return reply.send(asset.body);
        const body = await (asset.compressed[encoding] ??= compressors[encoding](asset.body));
        return reply.header('content-encoding', encoding).send(body);
      });
    },
  };
}
