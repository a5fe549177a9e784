/**
 * Summarises a V8 `.cpuprofile` (`BENCH_CPU_PROF=<dir> npm run bench -- roundtrip`, issue #26):
 * self time aggregated by function (name and file), and by source (devicehub's files, each
 * package under node_modules, Node's internals, GC, idle).
 *
 * Run: `node --import tsx scripts/cpu-profile-summary.ts <file.cpuprofile> [top]`.
 */
import { readFileSync } from 'node:fs'
import { codeSource } from './code-source.js'

interface ProfileNode {
  id: number
  callFrame: { functionName: string, url: string, lineNumber: number }
  children?: number[]
}
interface Profile { nodes: ProfileNode[], samples: number[], timeDeltas: number[] }

const [file, topArgument] = process.argv.slice(2)
if (file === undefined) {
  console.error('usage: cpu-profile-summary.ts <file.cpuprofile> [top]')
  process.exit(2)
}
const top = Number(topArgument ?? 30)
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile
const byId = new Map(profile.nodes.map((node) => [node.id, node]))

// Each sample's time is the delta to the next one (V8's convention: timeDeltas[i+1]).
const selfUs = new Map<number, number>()
for (let i = 0; i < profile.samples.length; i++) {
  const delta = profile.timeDeltas[i + 1] ?? 0
  selfUs.set(profile.samples[i]!, (selfUs.get(profile.samples[i]!) ?? 0) + delta)
}

function source (url: string, name: string): string {
  if (url === '') return name.startsWith('(') ? name : '(native)'
  return codeSource(url)
}

const byFunction = new Map<string, number>()
const bySource = new Map<string, number>()
const byPackage = new Map<string, number>()
let total = 0
for (const [id, us] of selfUs) {
  const node = byId.get(id)!
  const { functionName, url, lineNumber } = node.callFrame
  const name = functionName === '' ? '(anonymous)' : functionName
  const where = source(url, name)
  const key = `${name}  ${where}${url === '' ? '' : `:${lineNumber + 1}`}`
  byFunction.set(key, (byFunction.get(key) ?? 0) + us)
  bySource.set(where, (bySource.get(where) ?? 0) + us)
  const pkg = where.startsWith('devicehub ') ? 'devicehub (all of lib/)' : where
  byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us)
  total += us
}
const idle = bySource.get('(idle)') ?? 0
const busy = total - idle

function print (title: string, map: Map<string, number>, count: number): void {
  console.log(`\n${title}`)
  const rows = [...map.entries()].filter(([key]) => key !== '(idle)').sort((a, b) => b[1] - a[1]).slice(0, count)
  for (const [key, us] of rows) console.log(`${(us / 1000).toFixed(0).padStart(7)} ms  ${(100 * us / busy).toFixed(1).padStart(5)}%  ${key}`)
}

console.log(`${file}: ${(total / 1e6).toFixed(2)} s sampled, ${(busy / 1e6).toFixed(2)} s busy (not idle); shares below are of busy time`)
print('by package', byPackage, 15)
print('by source file', bySource, top)
print('by function (self time)', byFunction, top)
