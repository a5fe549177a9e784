/**
 * Readiness: can this instance serve requests right now? The store answers a query, the
 * bus (when it has a connection of its own, as PostgreSQL's LISTEN) is connected, the
 * first-start data exists (startup) and the hub is not shutting down. Liveness needs no check: a process that answers HTTP is alive.
 */
import type { Store } from '../ports.js'

export interface HealthCheck {
  status: 'ok' | 'fail'
  /** How long the check took, in ms. */
  durationMs: number
  /** Why it failed (never a secret: driver messages are not passed through). */
  message?: string
}

export interface HealthReport {
  /** `ok` when every check passed. */
  status: 'ok' | 'fail'
  /** `doorbell` is the bus's check (the name is kept: it is part of `/healthz`'s answer). */
  checks: { store: HealthCheck, doorbell: HealthCheck, shutdown: HealthCheck, startup: HealthCheck }
}

export interface HealthOptions {
  store: Store
  /** False while the bus's own connection is down (its `connection` events, see bus.ts). */
  busConnected: () => boolean
  closing: () => boolean
  /** False until the first-start data exists (the server holds requests until then). Default: true. */
  initialised?: () => boolean
  /** A store that does not answer within this many ms fails the check (default 2000). */
  timeoutMs?: number
}

/**
 * @example
 * const report = await checkHealth({ store, busConnected: () => true, closing: () => false })
 * if (report.status !== 'ok') console.warn(report.checks)
 */
export async function checkHealth (options: HealthOptions): Promise<HealthReport> {
  const store = await timed(async () => {
    await withTimeout(options.store.secrets.get('bootstrap.completed'), options.timeoutMs ?? 2000)
  }, 'the store did not answer')
  const doorbell = await timed(async () => {
    if (!options.busConnected()) throw new Error('the bus connection is down')
  }, 'the doorbell connection is down')
  const shutdown = await timed(async () => {
    if (options.closing()) throw new Error('shutting down')
  }, 'shutting down')
  const startup = await timed(async () => {
    if (options.initialised?.() === false) throw new Error('starting')
  }, 'the first-start initialisation is not done yet')
  const status = [store, doorbell, shutdown, startup].every((c) => c.status === 'ok') ? 'ok' : 'fail'
  return { status, checks: { store, doorbell, shutdown, startup } }
}

async function timed (check: () => Promise<void>, message: string): Promise<HealthCheck> {
  const started = performance.now()
  try {
    await check()
    return { status: 'ok', durationMs: Math.round((performance.now() - started) * 1000) / 1000 }
  } catch {
    return { status: 'fail', durationMs: Math.round((performance.now() - started) * 1000) / 1000, message }
  }
}

function withTimeout<T> (promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error('timeout')), ms)
  })
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer))
}
