import t from 'tap'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'

// The dependency direction of docs/architecture.md, checked on every import specifier.
const ROOT = join(import.meta.dirname, '..')

function files (dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : []
  })
}

function imports (source: string): string[] {
  const found: string[] = []
  for (const match of source.matchAll(/(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)) {
    found.push(match[1] ?? match[2]!)
  }
  return found
}

const LAYER_RULES: Record<string, { packages: RegExp, layers: string[] }> = {
  core: { packages: /^(fastify|@fastify\/|kysely|better-sqlite3|pg|commander|find-my-way)/, layers: ['http', 'store', 'doorbells', 'cli', 'client', 'testing'] },
  store: { packages: /^(fastify|@fastify\/|commander|find-my-way)/, layers: ['http', 'doorbells', 'cli', 'client', 'testing'] },
  doorbells: { packages: /^(fastify|@fastify\/|kysely|better-sqlite3|commander)/, layers: ['http', 'store', 'cli'] },
  http: { packages: /^(kysely|better-sqlite3|pg|commander)/, layers: ['store', 'doorbells', 'cli', 'client', 'testing'] },
  // A client runs anywhere (scripts, simulators): fetch only, and core's types.
  client: { packages: /^(fastify|@fastify\/|kysely|better-sqlite3|pg|commander|find-my-way)/, layers: ['http', 'store', 'doorbells', 'cli', 'testing'] },
  testing: { packages: /^(commander)/, layers: ['cli'] }
}

t.test('each layer imports only what it may', async (t) => {
  let checked = 0
  for (const [layer, rule] of Object.entries(LAYER_RULES)) {
    let dir: string
    try {
      dir = join(ROOT, 'lib', layer)
      statSync(dir)
    } catch {
      continue
    }
    for (const file of files(dir)) {
      const source = readFileSync(file, 'utf8')
      for (const spec of imports(source)) {
        checked++
        const name = relative(ROOT, file)
        t.notOk(rule.packages.test(spec), `${name} must not import ${spec}`)
        if (spec.startsWith('.')) {
          const target = relative(join(ROOT, 'lib'), join(file, '..', spec)).split(/[\\/]/)[0]!
          t.notOk(rule.layers.includes(target), `${name} must not import from lib/${target} (${spec})`)
        }
      }
      if (layer === 'core') t.notMatch(source, /process\.env/, `${relative(ROOT, file)} must not read process.env`)
    }
  }
  t.ok(checked > 50, `checked ${checked} imports`)
})

t.test('only lib/cli reads process.env', async (t) => {
  for (const file of files(join(ROOT, 'lib'))) {
    const name = relative(ROOT, file)
    if (name.startsWith('lib/cli/')) continue
    t.notMatch(readFileSync(file, 'utf8'), /process\.env/, name)
  }
})
