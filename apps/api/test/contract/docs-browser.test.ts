// The interactive docs in a real browser: headless Debian Chromium (driven by playwright-core) loads /docs from the
// listening app, opens GET /api/v1/users, clicks "Try it out" and "Execute", and reads the 200 envelope it shows.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyInstance } from 'fastify';
import { existsSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { createTestApp } from '../support/app.js';
import { describeRequiring } from '../support/requirements.js';

/**
 * The browser: CHROMIUM_PATH, else a Chromium or Chrome on PATH or where Playwright or macOS put it. None: the suite
 * is skipped with a line in `pnpm test`'s summary (CI, which installs Debian's, sets REQUIRE_BROWSER_TEST=1).
 */
function findChromium(): string | undefined {
  const onPath = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'].flatMap((name) =>
    (process.env.PATH ?? '').split(path.delimiter).map((dir) => path.join(dir, name)),
  );
  const playwrightCache = path.join(os.homedir(), '.cache', 'ms-playwright');
  const playwright = existsSync(playwrightCache)
    ? readdirSync(playwrightCache)
        .filter((dir) => dir.startsWith('chromium-'))
        .flatMap((dir) => ['chrome-linux/chrome', 'chrome-linux64/chrome'].map((binary) => path.join(playwrightCache, dir, binary)))
    : [];
  const macOS = ['/Applications/Chromium.app/Contents/MacOS/Chromium', '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome'];
  const candidates = process.env.CHROMIUM_PATH ? [process.env.CHROMIUM_PATH] : [...onPath, ...playwright, ...macOS];
  return candidates.find((candidate) => existsSync(candidate));
}

const CHROMIUM = findChromium();
const describeWithBrowser = describeRequiring({
  suites: 'the browser tests of /docs and GraphiQL (apps/api/test/contract/docs-browser.test.ts)',
  missing: CHROMIUM ? [] : [process.env.CHROMIUM_PATH ? `Chromium at CHROMIUM_PATH=${process.env.CHROMIUM_PATH}` : 'Chromium or Chrome'],
  requiredBy: 'REQUIRE_BROWSER_TEST',
  howToRun: 'install Chromium (apt-get install chromium, brew install --cask chromium) or set CHROMIUM_PATH to a Chrome',
});

// As root, in a closed network: no sandbox, and none of Chromium's own background connections.
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

let app: FastifyInstance;
let baseUrl: string;
let browser: Browser | undefined;

describeWithBrowser('/docs and GraphiQL in Chromium', () => {
  beforeAll(async () => {
    app = await createTestApp();
    await app.db.prisma.user.createMany({
      data: [
        { name: 'Ada', email: 'ada@example.com' },
        { name: 'Grace', email: 'grace@example.com' },
      ],
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    if (!address || typeof address === 'string') throw new Error('app is not listening on TCP');
    baseUrl = `http://127.0.0.1:${address.port}`;

    // playwright-core gives every launch a new empty profile directory of its own.
    browser = await chromium.launch({ executablePath: CHROMIUM!, headless: true, args: CHROMIUM_ARGS });
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('runs GET /api/v1/users through "Try it out" → "Execute" and shows 200 with the envelope', async () => {
    const page = await browser!.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(`${baseUrl}/docs`);

    // The users operations are listed under the Users tag.
    const operation = page.locator('#operations-Users-listUsers');
    await operation.waitFor({ state: 'visible', timeout: 20_000 });
    await expect(operation.locator('.opblock-summary-path').textContent()).resolves.toContain('/api/v1/users');
    await expect(page.locator('[id^="operations-Users-"]').count()).resolves.toBeGreaterThan(3);

    await operation.locator('.opblock-summary').first().click();
    const tryItOut = operation.locator('button.try-out__btn');
    await tryItOut.waitFor({ state: 'visible' });
    if ((await tryItOut.textContent())?.trim() === 'Try it out') await tryItOut.click(); // already on with tryItOutEnabled
    await expect(tryItOut.textContent()).resolves.toContain('Cancel');

    // Swagger UI pre-fills every parameter with its example, and the examples together are contradictory (cursor with
    // page and offset, and an example cursor the server calls malformed → 400); clear them as a user would.
    const inputs = operation.locator('.parameters input[type="text"]');
    for (let i = 0; i < (await inputs.count()); i++) await inputs.nth(i).fill('');
    const selects = operation.locator('.parameters select');
    for (let i = 0; i < (await selects.count()); i++) await selects.nth(i).selectOption({ index: 0 });

    const executed = page.waitForResponse((response) => new URL(response.url()).pathname === '/api/v1/users');
    await operation.locator('button.execute').click();
    const answer = await executed;
    expect({ url: answer.url(), status: answer.status() }).toEqual({ url: `${baseUrl}/api/v1/users`, status: 200 });

    // What the page shows for the live response: the status and the body.
    const live = operation.locator('.live-responses-table .response').first();
    await live.waitFor({ state: 'visible' });
    expect((await live.locator('.response-col_status').textContent())?.trim()).toBe('200');
    const shown = await live.locator('.response-col_description pre').first().textContent();
    const body = JSON.parse(shown ?? '');
    expect(body).toMatchObject({
      code: 0,
      message: expect.any(String),
      data: { items: expect.any(Array), total: 2 },
    });
    // Anonymous, as "Try it out" calls without credentials: names, and the private e-mails as "" (SPEC §3.1).
    expect(body.data.items.map((user: { name: string; email: string }) => [user.name, user.email])).toEqual([
      ['Ada', ''],
      ['Grace', ''],
    ]);
    expect(pageErrors).toEqual([]);
    await page.close();
  });

  describe('GraphiQL (quiet by default: its assets served by the product)', () => {
    it('renders at GET /graphql with no request to another host and no CSP violation', async () => {
      const page = await browser!.newPage();
      const foreign: string[] = [];
      const problems: string[] = [];
      page.on('request', (request) => {
        const url = new URL(request.url());
        if (
          (url.protocol === 'http:' || url.protocol === 'https:' || url.protocol === 'ws:' || url.protocol === 'wss:') &&
          url.origin !== baseUrl &&
          url.host !== new URL(baseUrl).host
        ) {
          foreign.push(request.url());
        }
      });
      const assets: string[] = [];
      page.on('response', (response) => {
        const url = new URL(response.url());
        if (url.pathname.startsWith('/graphiql/')) assets.push(`${response.status()} ${url.pathname.split('/').at(-1)}`);
      });
      page.on('pageerror', (error) => problems.push(error.message));
      page.on('console', (message) => {
        if (/Content Security Policy|Refused to|Could not create web worker/i.test(message.text())) problems.push(message.text());
      });
      // Monaco starts a worker from its URL once an editor is up (the first worker, an event, not a wait).
      const worker = page.waitForResponse((response) => /\/graphiql\/\w+\/\w+\.worker\.js$/.test(response.url()), { timeout: 60_000 });
      // GraphiQL's introspection, its last request at start (an event: `networkidle` is 500 ms of quiet, which a loaded
      // machine's slow workers kept from coming within its time limit).
      const introspection = page.waitForResponse((response) => response.url().endsWith('/graphql') && response.request().method() === 'POST', {
        timeout: 60_000,
      });
      await page.goto(`${baseUrl}/graphql`);
      await page.locator('.graphiql-container').first().waitFor({ state: 'visible', timeout: 60_000 });
      expect((await worker).status()).toBe(200);
      expect((await introspection).status()).toBe(200);
      expect(foreign).toEqual([]);
      expect(problems).toEqual([]);
      // The page's assets, the product's own static files (graphql/transports/graphiql.ts), Monaco's workers among them.
      expect(assets).toEqual(expect.arrayContaining(['200 environment.js', '200 graphiql.js', '200 graphiql.css', '200 start.js']));
      await page.close();
    });
  });
});
