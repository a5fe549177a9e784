/**
 * (c) 10,000 parked long polls: server RSS per parked poll, and the time from one
 * notification to all 10,000 answers. Raw sockets on the client side keep it light.
 */
import net from 'node:net'
import type { ChildServer } from '../lib.js'
import { benchDatabaseLabel } from '../pg.js'
import { printTable, request, sleep, startChild } from '../lib.js'

const POLLS = 10_000
const BATCH = 500

interface Parked {
  answered(): number
  allAnswered: Promise<number>
  close(): void
}

async function park (url: string, token: string): Promise<Parked> {
  const { hostname, port, pathname, search } = new URL(url)
  const head = `GET ${pathname}${search} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`
  const sockets: net.Socket[] = []
  let answered = 0
  let done: (at: number) => void = () => {}
  const allAnswered = new Promise<number>((resolve) => { done = resolve })
  for (let i = 0; i < POLLS; i += BATCH) {
    await Promise.all(Array.from({ length: Math.min(BATCH, POLLS - i) }, () => new Promise<void>((resolve, reject) => {
      const socket = net.connect(Number(port), hostname, () => {
        socket.write(head)
        resolve()
      })
      let seen = false
      socket.on('data', () => {
        if (seen) return
        seen = true
        if (++answered === POLLS) done(performance.now())
      })
      socket.on('error', reject)
      sockets.push(socket)
    })))
  }
  return { answered: () => answered, allAnswered, close: () => { for (const s of sockets) s.destroy() } }
}

async function measure (server: ChildServer, pollUrl: string, ring: () => Promise<unknown>): Promise<{ idleRss: number, parkedRss: number, perPollKb: number, heapPerPollKb: number, releaseMs: number, answered: number }> {
  await sleep(300)
  const idle = await server.stats()
  const parked = await park(pollUrl, server.token)
  const deadline = Date.now() + 30_000
  while ((await server.stats()).waiters < POLLS) {
    if (Date.now() > deadline) throw new Error(`polls did not all park: ${(await server.stats()).waiters} of ${POLLS} at ${server.url}`)
    await sleep(100)
  }
  await sleep(300)
  const full = await server.stats()
  const started = performance.now()
  await ring()
  const finished = await Promise.race([parked.allAnswered, sleep(10_000).then(() => NaN)])
  const answered = parked.answered()
  if (answered < POLLS) {
    // Which side lost it: polls the server still holds were not woken; none held means the answer was lost on the way.
    console.error(`  ${POLLS - answered} of ${POLLS} polls unanswered after 10 s; the server still holds ${(await server.stats()).waiters} parked`)
  }
  parked.close()
  return { idleRss: idle.rss, parkedRss: full.rss, perPollKb: (full.rss - idle.rss) / POLLS / 1024, heapPerPollKb: (full.heap - idle.heap) / POLLS / 1024, releaseMs: finished - started, answered }
}

export async function parkedPolls (): Promise<{ rssMb: number, releaseMs: number }> {
  const children: ChildServer[] = []
  try {
    const baseline = await startChild('baseline-server')
    children.push(baseline)
    const base = await measure(baseline, `${baseline.url}/poll`, () => request('POST', `${baseline.url}/ring`, 'none', {}))
    await baseline.stop()
    children.pop()

    const hub = await startChild('devicehub-server')
    children.push(hub)
    const ours = await measure(hub, `${hub.url}/device/bench-device/notification/poll?waitTimeout=60`, () =>
      request('POST', `${hub.url}/device/bench-device/notification`, hub.token, { notification: 'ring', parameters: { all: true } }))
    const mb = (bytes: number): number => bytes / 1024 / 1024
    printTable(`(c) ${POLLS} parked long polls, released by one notification (${benchDatabaseLabel()})`, ['server', 'idle RSS MB', 'parked RSS MB', 'RSS KB per poll', 'heap KB per poll', 'release all ms', 'answered'], [
      ['bare Fastify', mb(base.idleRss), mb(base.parkedRss), base.perPollKb, base.heapPerPollKb, base.releaseMs, base.answered],
      ['devicehub', mb(ours.idleRss), mb(ours.parkedRss), ours.perPollKb, ours.heapPerPollKb, ours.releaseMs, ours.answered],
      ['ratio', mb(ours.idleRss) / mb(base.idleRss), mb(ours.parkedRss) / mb(base.parkedRss), ours.perPollKb / base.perPollKb, ours.heapPerPollKb / base.heapPerPollKb, ours.releaseMs / base.releaseMs, '']
    ])
    const rssMb = mb(ours.parkedRss)
    console.log(`targets: < 200 MB RSS in total -> ${rssMb < 200 ? 'met' : 'NOT met'} (${rssMb.toFixed(1)} MB); all released within 2 s -> ${ours.releaseMs < 2000 && ours.answered === POLLS ? 'met' : 'NOT met'} (${ours.releaseMs.toFixed(0)} ms)`)
    return { rssMb, releaseMs: ours.releaseMs }
  } finally {
    for (const child of children) await child.stop()
  }
}
