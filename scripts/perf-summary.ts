/**
 * Summarises a `perf record` of a devicehub child (`BENCH_PERF=<dir> npm run bench -- insert`,
 * bench/perf-record.ts): where its CPU went, natives included, for issue #26's cost breakdown.
 *
 * - by thread: the event loop (the thread whose id is the process id) and the rest (V8's
 *   garbage-collector helpers, libuv's pool, SQLite's checkpointer);
 * - on the event loop, by what the sampled instruction was (the leaf): the kernel, SQLite,
 *   V8's garbage collector, V8's builtins and runtime, JavaScript, Node's C++, malloc;
 * - on the event loop, each sample charged to the nearest JavaScript function on its stack (a
 *   socket write's kernel time to the stream's `doWrite`, SQLite's to the function that ran the
 *   statement), summed by source (a devicehub file, a package, Node's internals) and by function;
 * - on the event loop, by the sampled symbol itself (self time: a builtin, a kernel function).
 *
 * Run: `node --import tsx scripts/perf-summary.ts <file.perf.data> [top]`; needs `perf` and the
 * child's `/tmp/perf-<pid>.map` (written by `--perf-basic-prof`).
 */
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { codeSource, shortPath } from './code-source.js'

const [file, topArgument] = process.argv.slice(2)
if (file === undefined) {
  console.error('usage: perf-summary.ts <file.perf.data> [top]')
  process.exit(2)
}
const top = Number(topArgument ?? 30)

interface Sample { pid: number, tid: number, frames: string[] }

/** One frame line of `perf script`: `addr symbol+off (dso)` -> `symbol (dso)`. */
function frameOf (line: string): string {
  const text = line.trim().replace(/^[0-9a-f]+ /, '')
  return text.replace(/\+0x[0-9a-f]+ \(/, ' (')
}

async function * samples (path: string): AsyncGenerator<Sample> {
  const perf = spawn('perf', ['script', '-i', path, '-F', 'pid,tid,ip,sym,dso'], { stdio: ['ignore', 'pipe', 'ignore'] })
  let current: Sample | undefined
  for await (const line of createInterface({ input: perf.stdout })) {
    if (line.trim() === '') {
      if (current !== undefined) yield current
      current = undefined
    } else if (current === undefined) {
      const match = /(\d+)\/(\d+)/.exec(line)
      current = { pid: Number(match?.[1] ?? 0), tid: Number(match?.[2] ?? 0), frames: [] }
    } else {
      current.frames.push(frameOf(line))
    }
  }
  if (current !== undefined) yield current
}

/** What the sampled instruction was. */
function leafKind (frame: string): string {
  if (frame.includes('[kernel.kallsyms]')) return 'kernel (syscalls, TCP, page cache)'
  if (/sqlite3|better_sqlite3|Statement::|Binder::|Database::/.test(frame)) return 'SQLite'
  if (/Scaveng|MarkCompact|Sweeper|GCTracer|Heap::|Marking|Evacuat|ConcurrentMarking|MinorMC/.test(frame)) return 'V8 garbage collector'
  if (frame.startsWith('JS:')) return 'JavaScript (JIT code)'
  if (frame.startsWith('Builtins_') || frame.includes('v8::internal::')) return 'V8 builtins and runtime'
  if (frame.includes('node::') || frame.includes('llhttp') || frame.includes('uv_') || frame.includes('uv__')) return 'Node C++, libuv, llhttp'
  if (/malloc|free|_int_|unlink_chunk|operator new|operator delete/.test(frame)) return 'malloc'
  return 'other native'
}

/** The nearest JavaScript function on the stack, and its source. */
function nearestJs (frames: string[]): { fn: string, source: string } {
  const js = frames.find((f) => f.startsWith('JS:'))
  if (js === undefined) return { fn: '(no JavaScript on the stack)', source: '(no JavaScript)' }
  const match = /^JS:\S?(\S*) (\S+)/.exec(js)
  const name = match?.[1] === '' || match?.[1] === undefined ? '(anonymous)' : match[1]
  const where = match?.[2] ?? ''
  return { fn: `${name}  ${shortPath(where)}`, source: codeSource(where) }
}

const add = (map: Map<string, number>, key: string): void => { map.set(key, (map.get(key) ?? 0) + 1) }

const byThread = new Map<string, number>()
const byLeaf = new Map<string, number>()
const bySource = new Map<string, number>()
const byFunction = new Map<string, number>()
const byLeafSymbol = new Map<string, number>()
let all = 0
let loop = 0
for await (const sample of samples(file)) {
  all++
  const main = sample.tid === sample.pid
  add(byThread, main ? 'event loop' : 'other threads (GC helpers, libuv pool, SQLite checkpointer)')
  if (!main) continue
  loop++
  add(byLeaf, leafKind(sample.frames[0] ?? ''))
  add(byLeafSymbol, (sample.frames[0] ?? '(none)').replace(/ \(.*\)$/, ''))
  const { fn, source } = nearestJs(sample.frames)
  add(bySource, source)
  add(byFunction, fn)
}

function print (title: string, map: Map<string, number>, total: number, count: number): void {
  console.log(`\n${title}\n`)
  console.log('| share | samples | |\n|---|---|---|')
  for (const [key, n] of [...map].sort((a, b) => b[1] - a[1]).slice(0, count)) {
    console.log(`| ${(100 * n / total).toFixed(1)}% | ${n} | ${key} |`)
  }
}

console.log(`${file}: ${all} samples (${(all / 999).toFixed(1)} s of CPU at 999 Hz), ${loop} on the event loop`)
print('By thread', byThread, all, 5)
print('Event loop, by what the sampled instruction was', byLeaf, loop, 10)
print('Event loop, each sample charged to its nearest JavaScript function: by source', bySource, loop, top)
print('Event loop, the same by function', byFunction, loop, top)
print('Event loop, by sampled symbol (self time)', byLeafSymbol, loop, top)
