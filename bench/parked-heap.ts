/**
 * What one parked long poll keeps on the heap, by kind of object (issue #26: the paced round
 * trip's tail is its scavenges, and what a scavenge copies is mostly the state of the requests
 * parked at that moment). Starts the compiled devicehub child and the bare baseline in turn (with
 * the inspector on), parks 100 polls, takes a heap snapshot, parks `count` more, takes another,
 * and prints the difference per poll: object counts and self sizes by constructor, internal arrays
 * by what holds them.
 *
 * Run: `node --import tsx bench/parked-heap.ts [count]` (default 1,000; each poll its own connection,
 * so a connection's own state is in both servers' figures).
 */
import http from 'node:http'
import WebSocket from 'ws'
import type { ChildServer } from './lib.js'
import { sleep, startChild } from './lib.js'

const INSPECTOR_PORT = 9341
const BASE = 100

interface Snapshot {
  snapshot: { meta: { node_fields: string[], node_types: [string[]], edge_fields: string[], edge_types: [string[]] } }
  nodes: number[]
  edges: number[]
  strings: string[]
}

type Tally = Map<string, { count: number, bytes: number }>

async function takeSnapshot (): Promise<Snapshot> {
  const targets = await (await fetch(`http://127.0.0.1:${INSPECTOR_PORT}/json/list`)).json() as Array<{ webSocketDebuggerUrl: string }>
  const socket = new WebSocket(targets[0]!.webSocketDebuggerUrl)
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject))
  const chunks: string[] = []
  const done = new Promise<void>((resolve) => {
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as { id?: number, method?: string, params?: { chunk: string } }
      if (message.method === 'HeapProfiler.addHeapSnapshotChunk') chunks.push(message.params!.chunk)
      if (message.id === 1) resolve()
    })
  })
  socket.send(JSON.stringify({ id: 1, method: 'HeapProfiler.takeHeapSnapshot', params: { reportProgress: false } }))
  await done
  socket.close()
  return JSON.parse(chunks.join('')) as Snapshot
}

/** Self sizes by constructor (closures as `fn <name>`, V8's own kinds in parentheses); internal arrays by their first holder. */
function tally (snap: Snapshot): Tally {
  const { meta } = snap.snapshot
  const nf = meta.node_fields.length
  const ef = meta.edge_fields.length
  const [type, name, size, edgeCount] = ['type', 'name', 'self_size', 'edge_count'].map((f) => meta.node_fields.indexOf(f)) as [number, number, number, number]
  const [edgeType, edgeName, edgeTo] = ['type', 'name_or_index', 'to_node'].map((f) => meta.edge_fields.indexOf(f)) as [number, number, number]
  const label = (i: number): string => {
    const kind = meta.node_types[0][snap.nodes[i + type]!]!
    if (kind === 'object') return snap.strings[snap.nodes[i + name]!]!
    return kind === 'closure' ? `fn ${snap.strings[snap.nodes[i + name]!]}` : `(${kind})`
  }
  const holder = new Map<number, string>()
  for (let i = 0, e = 0; i < snap.nodes.length; i += nf) {
    for (let k = 0; k < snap.nodes[i + edgeCount]!; k++, e += ef) {
      const to = snap.edges[e + edgeTo]!
      if (holder.has(to) || meta.node_types[0][snap.nodes[to + type]!] !== 'array') continue
      const kind = meta.edge_types[0][snap.edges[e + edgeType]!]
      holder.set(to, `${label(i)}.${kind === 'element' || kind === 'hidden' ? '[]' : snap.strings[snap.edges[e + edgeName]!]}`)
    }
  }
  const totals: Tally = new Map()
  for (let i = 0; i < snap.nodes.length; i += nf) {
    const own = label(i)
    const key = own === '(array)' ? `(array) held by ${holder.get(i) ?? '?'}` : own
    const entry = totals.get(key) ?? { count: 0, bytes: 0 }
    entry.count++
    entry.bytes += snap.nodes[i + size]!
    totals.set(key, entry)
  }
  return totals
}

/** Opens `count` polls that stay parked (a connection each) and waits until the server holds them. */
async function park (server: ChildServer, count: number, parked: () => Promise<number>, target: number): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity })
  for (let i = 0; i < count; i++) {
    const url = `${server.url}/device/pair-${i % 100}/command/poll?waitTimeout=60&timestamp=${Date.now()}`
    http.get(url, { agent, headers: { authorization: `Bearer ${server.token}` } }, (res) => res.resume()).on('error', () => {})
  }
  for (let waited = 0; (await parked()) < target && waited < 30_000; waited += 200) await sleep(200)
}

async function measure (name: 'devicehub-server' | 'baseline-server', count: number): Promise<{ perPoll: number, rows: Array<[string, number, number]> }> {
  process.env.BENCH_CHILD_ARGS = `${process.env.BENCH_CHILD_ARGS ?? ''} --inspect=${INSPECTOR_PORT}`
  const server = await startChild(name)
  try {
    // The baseline does not count its parked device polls: it gets a fixed 1.5 s to park them.
    const parked = name === 'devicehub-server'
      ? async () => (await server.stats()).waiters
      : async () => { await sleep(1500); return Number.POSITIVE_INFINITY }
    await park(server, BASE, parked, BASE)
    const before = tally(await takeSnapshot())
    await park(server, count, parked, BASE + count)
    const after = tally(await takeSnapshot())
    const rows: Array<[string, number, number]> = [...after].map(([key, { count: n, bytes }]) =>
      [key, (n - (before.get(key)?.count ?? 0)) / count, (bytes - (before.get(key)?.bytes ?? 0)) / count])
    rows.sort((a, b) => b[2] - a[2])
    return { perPoll: rows.reduce((sum, row) => sum + row[2], 0), rows }
  } finally {
    await server.stop()
  }
}

const count = Number(process.argv[2] ?? 1000)
for (const name of ['devicehub-server', 'baseline-server'] as const) {
  const { perPoll, rows } = await measure(name, count)
  console.log(`\n${name}: ${perPoll.toFixed(0)} bytes of heap per parked poll (difference of ${BASE + count} and ${BASE} parked)`)
  console.log('objects  bytes  kind')
  for (const [key, n, bytes] of rows.slice(0, 30)) console.log(`${n.toFixed(2).padStart(7)}  ${bytes.toFixed(0).padStart(5)}  ${key.slice(0, 90)}`)
}
