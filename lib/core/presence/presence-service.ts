/**
 * Device presence (issue 15): `lastSeen` moves on device-authored activity (notification
 * insert, command poll, command update, an open real-time stream for one device), written at
 * most once per `throttleMs` per device and instance; a device is `online` while it has an
 * open real-time connection here or was seen within `windowMs`. Open connections are
 * refreshed every `heartbeatMs` (< window), so every instance over the same database reads the
 * same answer from `lastSeen` alone.
 *
 * Opt-in (`notifications: true`): `$device-online` when a device comes online and
 * `$device-offline` when the sweep finds its window expired. Both are conditional writes on
 * the presence row, so with several instances exactly one of them announces each change.
 */
import type { ServiceContext } from '../context.js'
import { countDown, countUp } from '../key-counts.js'
import type { Store } from '../ports.js'
import { formatTimestamp } from '../time.js'
import type { DevicePresence, Presence, PresenceSettings } from './presence.js'
import { DEFAULT_PRESENCE } from './presence.js'

// The interface lives in presence.ts, which imports nothing: the service context names it
// without importing this module (which builds on the context).
export type { DevicePresence, Presence, PresenceSettings } from './presence.js'
export { DEFAULT_PRESENCE } from './presence.js'

type Ctx = Pick<ServiceContext, 'store' | 'log' | 'clock' | 'logger'>

const SWEEP_BATCH = 500

/** Open connections refreshed by one statement of a heartbeat: about 2 ms of SQLite's time on the event loop. */
const HEARTBEAT_CHUNK = 200

/**
 * Transactions marking devices online at once, per instance. They queue on the message log's
 * order anyway (each may append a notification), so a reconnect storm waits here rather than in
 * the store's pool, where it would hold back the heartbeat and every request.
 */
const MARKING_AT_ONCE = 2

/** Runs at most `limit` of the works given to it at once; the others wait their turn, first come first served. */
function createQueue (limit: number): (work: () => Promise<void>) => Promise<void> {
  let running = 0
  const waiting: Array<() => void> = []
  return async (work) => {
    if (running < limit) running++
    else await new Promise<void>((resolve) => waiting.push(resolve))
    try {
      await work()
    } finally {
      // The turn passes to the next one waiting, if any.
      const next = waiting.shift()
      if (next === undefined) running--
      else next()
    }
  }
}

/** Appends `$device-online` / `$device-offline` for `deviceId` in `tx` (R3: with its network and device type). */
async function announce (
  ctx: Ctx, tx: Store, deviceId: string, name: '$device-online' | '$device-offline', lastSeen: number | undefined
): Promise<void> {
  const device = await tx.devices.findById(deviceId)
  if (device === undefined) return
  await ctx.log.append({
    kind: 'notification',
    input: {
      notification: name,
      deviceId,
      networkId: device.networkId,
      deviceTypeId: device.deviceTypeId,
      parameters: { online: name === '$device-online', lastSeen: lastSeen === undefined ? null : formatTimestamp(lastSeen) }
    }
  }, tx)
}

/** Marks `deviceId` online in a transaction, and announces it when that changed something. */
async function markOnlineNow (ctx: Ctx, settings: PresenceSettings, deviceId: string): Promise<void> {
  await ctx.store.transaction(async (tx) => {
    // The time the row is written, not the time the device was seen: a transaction that queued
    // past the window (thousands of devices reconnecting at once) would write a lastSeen the
    // next heartbeat already counts as expired, and announce the device offline and back.
    const now = ctx.clock.now()
    const since = now - settings.windowMs
    const before = settings.notifications ? (await tx.presence.lastSeen([deviceId])).get(deviceId) : undefined
    const change = await tx.presence.markOnline(deviceId, now, since)
    if (!settings.notifications || change === 'none') return
    // Came back before a sweep noticed it had gone: announce both, in order.
    if (change === 'expired') await announce(ctx, tx, deviceId, '$device-offline', before)
    await announce(ctx, tx, deviceId, '$device-online', now)
  })
}

/**
 * @example
 * const presence = createPresence(ctx, { windowMs: 30_000, notifications: true })
 * presence.start()
 */
export function createPresence (ctx: Ctx, options: Partial<PresenceSettings> = {}): Presence {
  const { store, clock, logger } = ctx
  const settings: PresenceSettings = { ...DEFAULT_PRESENCE, ...options }
  if (!Number.isSafeInteger(settings.windowMs) || settings.windowMs < 1000) throw new Error('presence window must be at least 1 s')
  const windowMs = settings.windowMs
  // At most one write per device per throttle; open connections refresh well inside the window.
  const throttleMs = Math.min(5000, Math.floor(windowMs / 4))
  const heartbeatMs = Math.min(15_000, Math.floor(windowMs / 3))
  const sweepMs = Math.min(5000, Math.floor(windowMs / 4))
  const written = new Map<string, number>()
  const connections = new Map<string, number>()
  const inFlight = new Set<Promise<unknown>>()
  /** Devices with a presence write under way, and how many: the heartbeat leaves them to it. */
  const writing = new Map<string, number>()
  const marking = createQueue(MARKING_AT_ONCE)
  let heartbeat: NodeJS.Timeout | undefined
  /** A heartbeat still running (thousands of connections, a slow database): the next one is skipped. */
  let beating = false
  let sweeper: NodeJS.Timeout | undefined
  let stopped = false

  function track<T> (promise: Promise<T>): Promise<T> {
    inFlight.add(promise)
    void promise.finally(() => inFlight.delete(promise)).catch(() => {})
    return promise
  }

  /** A device that `refresh` left out, marked online in its turn; even after stop(): a close's write is not lost. */
  const markOnline = (deviceId: string): Promise<void> => marking(() => markOnlineNow(ctx, settings, deviceId))

  async function write (deviceId: string, now: number): Promise<void> {
    if ((await store.presence.refresh([deviceId], now, now - windowMs)).size > 0) return
    await markOnline(deviceId)
  }

  /** Runs a presence write of `deviceId`: tracked (stop waits for it), and never failing (presence is best effort). */
  function settle (deviceId: string, work: Promise<void>): Promise<void> {
    countUp(writing, deviceId)
    return track(work.catch((error: unknown) => {
      // The device may have been deleted meanwhile.
      written.delete(deviceId)
      logger.debug({ err: error, deviceId }, 'presence write failed')
    }).finally(() => countDown(writing, deviceId)))
  }

  function seen (deviceId: string, force = false): Promise<void> {
    // After stop() the store may be closing: nothing more is written.
    if (stopped) return Promise.resolve()
    const now = clock.now()
    const last = written.get(deviceId)
    if (!force && last !== undefined && now - last < throttleMs) return Promise.resolve()
    written.set(deviceId, now)
    return settle(deviceId, write(deviceId, now))
  }

  /**
   * The heartbeat of the open connections: one refresh statement per {@link HEARTBEAT_CHUNK}
   * devices, the event loop free between chunks. A write per device, each its own SQLite commit
   * run on the event loop, made 10,000 connections a half-second stall every heartbeat.
   */
  async function beat (): Promise<void> {
    const deviceIds = [...connections.keys()]
    for (let i = 0; i < deviceIds.length && !stopped; i += HEARTBEAT_CHUNK) {
      if (i > 0) await new Promise((resolve) => setImmediate(resolve))
      const chunk = deviceIds.slice(i, i + HEARTBEAT_CHUNK)
      const now = clock.now()
      for (const deviceId of chunk) written.set(deviceId, now)
      // A device whose connection has just opened is being marked online by its own write: a
      // second transaction on its row would only queue behind the first (thousands at a restart).
      const beingMarked = new Set(chunk.filter((deviceId) => writing.has(deviceId)))
      const refreshed = await store.presence.refresh(chunk, now, now - windowMs)
      for (const deviceId of chunk) {
        if (!refreshed.has(deviceId) && !beingMarked.has(deviceId) && !stopped) void settle(deviceId, markOnline(deviceId))
      }
    }
  }

  async function sweep (): Promise<number> {
    if (!settings.notifications) return 0
    let count = 0
    const since = clock.now() - windowMs
    const expired = await store.presence.listExpired(since, SWEEP_BATCH)
    for (const deviceId of expired) {
      if (stopped) break
      // Connected here: the heartbeat is about to refresh it.
      if (connections.has(deviceId)) continue
      const done = await store.transaction(async (tx) => {
        const before = (await tx.presence.lastSeen([deviceId])).get(deviceId)
        if (!(await tx.presence.markOffline(deviceId, since))) return false
        await announce(ctx, tx, deviceId, '$device-offline', before)
        return true
      })
      if (done) count++
    }
    return count
  }

  function scheduleSweep (): void {
    if (stopped || !settings.notifications) return
    sweeper = setTimeout(() => {
      void track(sweep().catch((error: unknown) => {
        logger.warn({ err: error }, 'presence sweep failed')
        return 0
      })).then(scheduleSweep)
    }, sweepMs)
    sweeper.unref()
  }

  return {
    settings,
    seen: (deviceId) => seen(deviceId),

    connectionOpened (deviceId) {
      countUp(connections, deviceId)
      void seen(deviceId, true)
      let open = true
      return () => {
        if (!open) return
        open = false
        countDown(connections, deviceId)
        // Its last moment online counts as seen.
        void seen(deviceId, true)
      }
    },

    async describe (deviceIds) {
      const since = clock.now() - windowMs
      const seenAt = await store.presence.lastSeen(deviceIds)
      const result = new Map<string, DevicePresence>()
      for (const id of deviceIds) {
        const lastSeen = seenAt.get(id) ?? null
        result.set(id, { lastSeen, online: connections.has(id) || (lastSeen !== null && lastSeen >= since) })
      }
      return result
    },

    freshSince: () => clock.now() - windowMs,

    sweep,

    start () {
      if (stopped || heartbeat !== undefined) return
      heartbeat = setInterval(() => {
        if (!beating) {
          beating = true
          void track(beat().catch((error: unknown) => {
            logger.warn({ err: error }, 'presence heartbeat failed')
          }).finally(() => { beating = false }))
        }
        // Forget throttle entries that can no longer throttle anything.
        const old = clock.now() - throttleMs
        for (const [deviceId, at] of written) if (at < old) written.delete(deviceId)
      }, heartbeatMs)
      heartbeat.unref()
      scheduleSweep()
    },

    async stop () {
      stopped = true
      if (heartbeat !== undefined) clearInterval(heartbeat)
      if (sweeper !== undefined) clearTimeout(sweeper)
      while (inFlight.size > 0) await Promise.allSettled([...inFlight])
    }
  }
}
