/**
 * Where a running server's allocations come from (issue #26 point 1): connects to a Node.js
 * process started with `--inspect=<port>`, samples every allocation for a few seconds through
 * the inspector (objects that the young or old generation collected again included, so the
 * figures are allocation rates, not what stays live), and prints the sampled bytes by module, by
 * function and by the nearest devicehub frame on the stack (which of our calls made a library
 * allocate).
 *
 * Run against a bench child while a scenario loads it:
 *   BENCH_SECONDS=12 BENCH_CHILD_ARGS=--inspect=9339 npm run bench -- roundtrip &
 *   # once the devicehub child has warmed up (about 7 s after it starts):
 *   node --import tsx bench/allocations.ts 9339 6 /tmp/roundtrip.heapprofile
 *   # with --live: only what was not collected again by the end (what survived scavenges)
 *   # with --promoted: what no scavenge collected (moved to the old generation), whether or not a
 *   # major GC collected it since: what makes the old generation grow
 */
import { writeFileSync } from 'node:fs'
import WebSocket from 'ws'

interface CallFrame { functionName: string, url: string, lineNumber: number }
interface ProfileNode { callFrame: CallFrame, selfSize: number, children?: ProfileNode[] }
interface Reply { id?: number, result?: { profile?: { head: ProfileNode } } }

/** What a sample keeps: every allocation, what was not collected by the end, or what no scavenge collected. */
type Mode = 'all' | 'live' | 'promoted'

async function sample (port: number, seconds: number, mode: Mode): Promise<{ head: ProfileNode }> {
  const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json() as Array<{ webSocketDebuggerUrl: string }>
  const socket = new WebSocket(targets[0]!.webSocketDebuggerUrl)
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject))
  let next = 0
  const pending = new Map<number, (reply: Reply) => void>()
  socket.on('message', (data) => {
    const reply = JSON.parse(String(data)) as Reply
    if (reply.id !== undefined) pending.get(reply.id)?.(reply)
  })
  const send = (method: string, params: object = {}): Promise<Reply> => new Promise((resolve) => {
    const id = ++next
    pending.set(id, resolve)
    socket.send(JSON.stringify({ id, method, params }))
  })
  try {
    await send('HeapProfiler.enable')
    await send('HeapProfiler.startSampling', {
      // Live or promoted only: finer samples, as what stays is a small part of what is allocated.
      samplingInterval: mode === 'all' ? 8192 : 1024,
      includeObjectsCollectedByMajorGC: mode !== 'live',
      includeObjectsCollectedByMinorGC: mode === 'all'
    })
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
    const { result } = await send('HeapProfiler.stopSampling')
    if (result?.profile === undefined) throw new Error('the inspector returned no profile')
    return result.profile
  } finally {
    socket.close()
  }
}

/** A frame's source as a short name: the package, our file under lib/, or Node's module. */
function moduleOf (url: string): string {
  if (url === '') return '(native)'
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (pkg !== null) return pkg[1]!
  const ours = /\/(lib\/.*)$/.exec(url)
  return ours !== null ? ours[1]! : url.replace('file://', '')
}

function print (title: string, counts: Map<string, number>, total: number, rows: number): void {
  console.log(`\n${title}`)
  const sorted = [...counts].sort((a, b) => b[1] - a[1]).slice(0, rows)
  for (const [key, bytes] of sorted) console.log(`${(bytes / total * 100).toFixed(1).padStart(5)}%  ${key}`)
}

const mode: Mode = process.argv.includes('--live') ? 'live' : process.argv.includes('--promoted') ? 'promoted' : 'all'
const [port, seconds, out] = process.argv.slice(2).filter((a) => a !== '--live' && a !== '--promoted')
const profile = await sample(Number(port ?? 9339), Number(seconds ?? 6), mode)
if (out !== undefined) writeFileSync(out, JSON.stringify(profile))
const byModule = new Map<string, number>()
const byFunction = new Map<string, number>()
const byOurFrame = new Map<string, number>()
const add = (map: Map<string, number>, key: string, bytes: number): void => { map.set(key, (map.get(key) ?? 0) + bytes) }
let total = 0
// Iterative walk: each node with the nearest lib/ frame above it (or itself).
const stack: Array<[ProfileNode, string]> = [[profile.head, '(no devicehub frame)']]
while (stack.length > 0) {
  const [node, ours] = stack.pop()!
  const { functionName, url, lineNumber } = node.callFrame
  const where = `${functionName === '' ? '(anonymous)' : functionName} ${moduleOf(url)}:${lineNumber + 1}`
  const nearest = moduleOf(url).startsWith('lib/') ? where : ours
  total += node.selfSize
  add(byModule, moduleOf(url), node.selfSize)
  add(byFunction, where, node.selfSize)
  add(byOurFrame, nearest, node.selfSize)
  for (const child of node.children ?? []) stack.push([child, nearest])
}
const kept = { all: '', live: ', not collected by the end', promoted: ', collected by no scavenge' }[mode]
console.log(`${(total / 1024 / 1024).toFixed(1)} MB sampled over ${seconds ?? 6} s${kept}`)
print('by module', byModule, total, 15)
print('by function', byFunction, total, 25)
print('by the nearest devicehub frame (what our code made allocate)', byOurFrame, total, 20)
