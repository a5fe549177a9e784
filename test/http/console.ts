/** The console's HTTP side: where it is served, its headers, assets, and a clear 503 when not built. */
import { writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify from 'fastify'
import t from 'tap'
import { consolePath, registerConsole } from '../../lib/http/console.js'

t.test('consolePath: the context of the REST base + /console', async (t) => {
  t.equal(consolePath('/api/rest'), '/api/console')
  t.equal(consolePath('/dh/rest/'), '/dh/console')
  t.equal(consolePath(''), '/console')
  t.equal(consolePath('/api'), '/api/console')
})

t.test('serves index.html with the bases filled in, assets with a CSP, 404 for unknown files', async (t) => {
  const dir = t.testdir()
  writeFileSync(join(dir, 'index.html'), '<meta content="%REST_BASE%"><script src="%CONSOLE_PATH%/app.js"></script>')
  writeFileSync(join(dir, 'app.js'), 'console.log(1)')
  writeFileSync(join(dir, 'secret.txt'), 'not served')
  const app = Fastify({ routerOptions: { ignoreTrailingSlash: true } })
  registerConsole(app, { path: '/x/console', restBase: '/x/rest', directory: dir })
  t.teardown(() => app.close())
  for (const url of ['/x/console', '/x/console/', '/x/console/index.html']) {
    const res = await app.inject({ url })
    t.equal(res.statusCode, 200, url)
    t.equal(res.body, '<meta content="/x/rest"><script src="/x/console/app.js"></script>')
    t.match(res.headers['content-type'], /^text\/html/)
    t.match(res.headers['content-security-policy'], /script-src 'self'/)
    t.equal(res.headers['cache-control'], 'no-cache')
  }
  const js = await app.inject({ url: '/x/console/app.js' })
  t.equal(js.statusCode, 200)
  t.match(js.headers['content-type'], /^text\/javascript/)
  t.equal(js.headers['x-content-type-options'], 'nosniff')
  t.equal((await app.inject({ url: '/x/console/secret.txt' })).statusCode, 404, 'only known file types')
  t.equal((await app.inject({ url: '/x/console/..%2Fetc%2Fpasswd' })).statusCode, 404, 'no path traversal')
  t.equal((await app.inject({ url: '/x/console/missing.js' })).statusCode, 404)
})

t.test('not built: 503 with a message saying how to build it', async (t) => {
  const app = Fastify()
  registerConsole(app, { path: '/api/console', restBase: '/api/rest', directory: join(tmpdir(), 'no-such-console-dir') })
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/api/console' })
  t.equal(res.statusCode, 503)
  t.same(res.json(), { error: 503, message: 'The web console is not built: run npm run build' })
})
