/**
 * What an installed package gives a TypeScript user: the declarations compile under strict
 * settings without skipLibCheck and without the optional `pg` (and its types) installed, and
 * the README's TypeScript snippets compile against them. Plus the package.json basics.
 */
import t from 'tap'
import { execFile } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { ROOT } from './fixtures/cli.js'

t.setTimeout(300_000)
const run = promisify(execFile)
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')

t.test('package.json and README basics', async (t) => {
  t.equal(pkg.type, 'module')
  for (const path of Object.values(pkg.bin as Record<string, string>)) t.notMatch(path, /^\.\//, 'bin paths as npm publishes them (no ./)')
  t.match(pkg.scripts.start, /devicehub\.js serve/, 'npm start serves')
  const build = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8')) as { compilerOptions: Record<string, unknown> }
  t.equal(build.compilerOptions.sourceMap, false, 'no source maps pointing at unshipped sources')
  t.notOk(build.compilerOptions.declarationMap, 'no declaration maps either')
  t.notMatch(readme, /shared\/spec/, 'the README points only inside the repository')
  t.match(readme, /ESM only/i, 'the README says the package is ESM-only')
})

t.test('the declarations compile strictly without pg; the README snippets compile against them', async (t) => {
  // Outside the repository, so that nothing resolves through the repository's node_modules.
  const dir = mkdtempSync(join(tmpdir(), 'devicehub-consumer-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const installed = join(dir, 'node_modules', 'devicehub')
  await run(process.execPath, [TSC, '-p', join(ROOT, 'tsconfig.build.json'), '--emitDeclarationOnly', '--outDir', join(installed, 'dist')], { cwd: ROOT })
  writeFileSync(join(installed, 'package.json'), JSON.stringify({ name: 'devicehub', type: 'module', exports: pkg.exports, types: pkg.types }))
  // Every installed package except the optional PostgreSQL driver and the development-only types.
  const modules = join(ROOT, 'node_modules')
  for (const name of readdirSync(modules)) {
    if (name === 'devicehub' || name === 'pg' || name.startsWith('pg-') || name === '.bin' || name.startsWith('.')) continue
    if (name === '@types') {
      mkdirSync(join(dir, 'node_modules', '@types'), { recursive: true })
      // Only the types a user gets: those the package depends on, and Node's own (the user's).
      for (const types of readdirSync(join(modules, '@types'))) {
        if (types === 'node' || `@types/${types}` in pkg.dependencies) symlinkSync(join(modules, '@types', types), join(dir, 'node_modules', '@types', types))
      }
      continue
    }
    symlinkSync(join(modules, name), join(dir, 'node_modules', name))
  }
  const declarations = readdirSync(join(installed, 'dist'), { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.d.ts'))
  // Each entry point (devicehub, devicehub/server, /fastify, /postgres, /testing) has its declarations.
  for (const [subpath, entry] of Object.entries(pkg.exports as Record<string, { types: string }>)) {
    t.ok(declarations.includes(entry.types.replace(/^\.\/dist\//, '')), `${subpath}: ${entry.types} is emitted`)
  }
  for (const file of declarations) {
    const text = readFileSync(join(installed, 'dist', file), 'utf8')
    t.notMatch(text, /from ['"]pg['"]|import\(['"]pg['"]\)/, `${file} does not import pg`)
  }
  const snippets = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!)
  t.ok(snippets.length >= 2, 'the README has TypeScript snippets')
  snippets.forEach((code, i) => writeFileSync(join(dir, `snippet-${i}.ts`), code))
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', type: 'module', private: true }))
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: false, types: ['node'] },
    include: ['*.ts']
  }))
  cpSync(join(ROOT, 'LICENSE'), join(installed, 'LICENSE'))
  const result = await run(process.execPath, [TSC, '-p', join(dir, 'tsconfig.json')], { cwd: dir }).then(() => '', (error: { stdout?: string }) => error.stdout ?? String(error))
  t.equal(result, '', 'tsc --strict without skipLibCheck and without pg: no errors')
})
