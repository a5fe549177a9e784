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

/** lib/ files by path relative to lib/, each with the lib/ files it imports (types included). */
function importGraph (): Map<string, string[]> {
  const lib = join(ROOT, 'lib')
  const graph = new Map<string, string[]>()
  for (const file of files(lib)) {
    // Comments out: a JSDoc `{@link import('./x.js').X}` names a module without depending on it.
    const code = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '')
    const targets = imports(code)
      .filter((spec) => spec.startsWith('.'))
      .map((spec) => relative(lib, join(file, '..', spec)).replaceAll('\\', '/').replace(/\.js$/, '.ts'))
    graph.set(relative(lib, file).replaceAll('\\', '/'), [...new Set(targets)])
  }
  return graph
}

/** The strongly connected components with more than one file (Tarjan): each one is an import circle. */
function importCircles (graph: Map<string, string[]>): string[][] {
  let index = 0
  const indices = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const circles: string[][] = []
  const visit = (node: string): void => {
    indices.set(node, index)
    low.set(node, index++)
    stack.push(node)
    onStack.add(node)
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue
      if (!indices.has(next)) {
        visit(next)
        low.set(node, Math.min(low.get(node)!, low.get(next)!))
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, indices.get(next)!))
    }
    if (low.get(node) === indices.get(node)) {
      const component: string[] = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(member)
      } while (member !== node)
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) circles.push(component.sort())
    }
  }
  for (const node of graph.keys()) if (!indices.has(node)) visit(node)
  return circles.map((c) => c.sort()).sort((a, b) => a[0]!.localeCompare(b[0]!))
}

// Circles still to remove, each listed whole. Only the realtime redesign (issue #24) may
// shrink this list; nothing may join it.
const KNOWN_CIRCLES: string[][] = []

t.test('no import circles in lib/ (beyond the known ones)', async (t) => {
  const graph = importGraph()
  t.ok(graph.size > 100, `read ${graph.size} files`)
  const circles = importCircles(graph)
  const known = new Set(KNOWN_CIRCLES.map((circle) => [...circle].sort().join(' ')))
  t.same(circles.filter((circle) => !known.has(circle.join(' '))), [], 'every circle (files that import each other, types included)')
})

t.test('the circle finder finds circles', async (t) => {
  const graph = new Map([['a.ts', ['b.ts']], ['b.ts', ['c.ts']], ['c.ts', ['a.ts', 'd.ts']], ['d.ts', []], ['e.ts', ['e.ts']]])
  t.same(importCircles(graph), [['a.ts', 'b.ts', 'c.ts'], ['e.ts']])
})

// Module-level mutable state shared by every hub or app in the process. A hub, app or store
// owns its state (a field, a Fastify decorator); these are memo caches of immutable values
// (commented where they are declared).
const MODULE_STATE_ALLOWED: Record<string, string> = {
  'http/validation.ts validators': 'memo: compiled validators by schema text',
  'http/validation.ts serializers': 'memo: compiled serializers by schema text',
  'http/websocket/frames.ts viewJson': 'memo: the JSON of an immutable view',
  'store/dialects/sqlite-driver.ts loaded': 'memo: the loaded driver module',
  'core/auth/token-id.ts ids': 'memo: the id of an immutable token payload',
  'core/auth/actions.ts expanded': 'memo: the expansion of an immutable claim',
  'core/lenient-input.ts compiled': 'memo: the normaliser compiled from an immutable schema',
  'core/plugins/plugin-filter.ts parsedFilters': 'memo: a parsed filter text (bounded)'
}

t.test('no module-level mutable registries in lib/', async (t) => {
  const lib = join(ROOT, 'lib')
  const found: string[] = []
  for (const file of files(lib)) {
    const name = relative(lib, file).replaceAll('\\', '/')
    const source = readFileSync(file, 'utf8')
    // Top-level `let`, and top-level maps and sets created empty (filled at run time).
    for (const match of source.matchAll(/^let\s+(\w+)|^const\s+(\w+)\s*(?::[^=]+)?=\s*new\s+(?:WeakMap|Map|WeakSet|Set)\b[^(;]*\(\s*\)/gm)) {
      found.push(`${name} ${match[1] ?? match[2]}`)
    }
  }
  t.ok(found.length > 0, 'the pattern finds the allowed ones (the check works)')
  t.same(found.filter((entry) => !(entry in MODULE_STATE_ALLOWED)), [], 'module-level state not on the list')
  t.same(Object.keys(MODULE_STATE_ALLOWED).filter((entry) => !found.includes(entry)), [], 'list entries still present (remove the stale ones)')
})

t.test('core/realtime imports nothing from commands/ or notifications/ (issue #24)', async (t) => {
  const graph = importGraph()
  const realtime = [...graph.keys()].filter((name) => name.startsWith('core/realtime/'))
  t.ok(realtime.length > 10, `read ${realtime.length} realtime files`)
  const crossing = realtime.flatMap((name) => graph.get(name)!
    .filter((target) => target.startsWith('core/commands/') || target.startsWith('core/notifications/'))
    .map((target) => `${name} -> ${target}`))
  t.same(crossing, [], 'the log, its records and its streams stand on their own')
})
