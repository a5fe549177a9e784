/**
 * Swagger UI at the URL `serve` prints (`…/docs`, no trailing slash) and at `…/docs/`, standalone
 * and embedded under a host's prefix: the page and every asset it references answer 200 when
 * resolved the way a browser resolves them, and in real headless Chromium the UI renders.
 */
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import Fastify from 'fastify'
import { chromium } from 'playwright-core'
import { createDeviceHub } from '../../lib/core/devicehub.js'
import { devicehubPlugin } from '../../lib/http/plugin.js'
import { startServer } from '../../lib/start-server.js'
import { openSqliteStore } from '../../lib/store/dialects/sqlite.js'
import { ROOT } from '../fixtures/cli.js'

const CHROMIUM = process.env.DEVICEHUB_CHROMIUM ?? '/usr/bin/chromium'
const ARTIFACTS = join(ROOT, 'test-artifacts', 'docs')

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

/** The docs URLs of a standalone server and of an app embedding the plugin under `/iot/api/rest`. */
async function servers (t: Tap): Promise<Array<{ name: string, docs: string }>> {
  const server = await startServer({ port: 0 })
  t.teardown(() => server.close())
  const hub = await createDeviceHub({ store: await openSqliteStore(':memory:'), admin: { password: 'embedded-password' } })
  const host = Fastify()
  host.get('/', async () => ({ host: true }))
  await host.register(devicehubPlugin, { hub, prefix: '/iot/api/rest' })
  host.addHook('onClose', async () => hub.close())
  await host.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => host.close())
  const port = (host.server.address() as { port: number }).port
  return [
    { name: 'standalone', docs: `${server.url}/docs` },
    { name: 'embedded', docs: `http://127.0.0.1:${port}/iot/api/rest/docs` }
  ]
}

/** The `href` and `src` URLs of a page, resolved against the page's final URL, as a browser does. */
function assets (html: string, pageUrl: string): string[] {
  return [...html.matchAll(/\s(?:href|src)="([^"]+)"/g)].map((m) => new URL(m[1]!, pageUrl).href)
}

/** The status of a GET, its body read: an unread body keeps its connection busy, and `close()` waits for it. */
async function statusOf (url: string): Promise<number> {
  const response = await fetch(url)
  await response.arrayBuffer()
  return response.status
}

t.test('every asset of the docs page answers 200, with and without the trailing slash', async (t) => {
  for (const { name, docs } of await servers(t)) {
    for (const url of [docs, `${docs}/`]) {
      const page = await fetch(url)
      t.equal(page.status, 200, `${name}: ${url}`)
      t.equal(page.url, `${docs}/`, `${name}: ${url} ends on the page with the slash`)
      const links = assets(await page.text(), page.url)
      t.ok(links.some((link) => link.endsWith('/swagger-ui-bundle.js')), `${name}: the page loads the bundle`)
      t.ok(links.some((link) => link.endsWith('/swagger-ui.css')), `${name}: and the style sheet`)
      for (const link of links) t.equal(await statusOf(link), 200, `${name}: ${link}`)
      // swagger-initializer.js resolves `./json` against the page URL with a trailing slash.
      t.equal(await statusOf(`${docs}/json`), 200, `${name}: the OpenAPI document`)
    }
    const redirect = await fetch(`${docs}?x=1`, { redirect: 'manual' })
    t.equal(redirect.status, 302)
    t.equal(redirect.headers.get('location'), 'docs/?x=1', `${name}: a relative redirect keeps the query`)
  }
})

if (!existsSync(CHROMIUM)) {
  t.fail(`Chromium is missing at ${CHROMIUM}: install Debian's package (apt-get install -y chromium) or set DEVICEHUB_CHROMIUM`)
} else {
  t.test('Swagger UI renders in Chromium from the printed URL', async (t) => {
    mkdirSync(ARTIFACTS, { recursive: true })
    const browser = await chromium.launch({
      executablePath: CHROMIUM, headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking']
    })
    t.teardown(() => browser.close())
    for (const { name, docs } of await servers(t)) {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
      const failed: string[] = []
      page.on('response', (response) => { if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`) })
      page.on('requestfailed', (request) => failed.push(`${request.failure()?.errorText ?? 'failed'} ${request.url()}`))
      await page.goto(docs)
      await page.locator('.swagger-ui .info .title', { hasText: 'devicehub REST API' }).waitFor({ timeout: 15_000 })
      await page.locator('.opblock-summary-path', { hasText: '/device/{deviceId}/command' }).first().waitFor()
      await page.screenshot({ path: join(ARTIFACTS, `${name}.png`) })
      t.same(failed, [], `${name}: no request failed`)
      t.equal(page.url(), `${docs}/`, `${name}: the browser ends on the page with the slash`)
      await page.close()
    }
  })
}
