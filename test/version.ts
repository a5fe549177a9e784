import t from 'tap'
import { readFileSync } from 'node:fs'
import { SERVER_VERSION } from '../lib/core/version.js'

t.test('SERVER_VERSION matches package.json', async (t) => {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
  t.equal(SERVER_VERSION, pkg.version)
})
