/**
 * `devicehub simulate`: N software devices against any DeviceHive-compatible REST URL. Each
 * registers itself, answers its commands (status `completed`, the parameters echoed back) and
 * the fleet sends notifications at a given total rate. A live progress line goes to stderr; a
 * summary when the run ends (after `--duration`, or on SIGINT/SIGTERM).
 */
import { createRestClient } from '../client/rest-client.js'
import type { RestClient } from '../client/rest-client.js'
import { createSimulatedDevice } from '../client/simulated-device.js'
import type { SimulatedDevice } from '../client/simulated-device.js'
import type { CliIo } from './cli-io.js'

export interface SimulateOptions {
  url: string
  token?: string
  login?: string
  password?: string
  devices: number
  /** Notifications per second, for the whole fleet. */
  rate: number
  prefix: string
  /** Milliseconds; 0 runs until a signal. */
  duration: number
  networkId?: number
  /** How the devices receive commands: REST long polls (default) or one WebSocket each. */
  transport?: 'rest' | 'websocket'
  /** Progress line interval (ms). */
  progressMs?: number
}

export interface SimulateSummary {
  devices: number
  notifications: number
  commands: number
  errors: number
  seconds: number
}

const TICK_MS = 100

async function connect (options: SimulateOptions): Promise<{ client: RestClient, token: string }> {
  if (options.token !== undefined) return {
    client: createRestClient({ url: options.url, accessToken: options.token }), token: options.token
  }
  if (options.login === undefined || options.password === undefined) {
    throw new Error('give --token, or --login and --password')
  }
  const anonymous = createRestClient({ url: options.url })
  const tokens = await anonymous.request<{ accessToken: string, refreshToken: string }>('POST', '/token', {
    body: { login: options.login, password: options.password }
  })
  return { client: createRestClient({ url: options.url, ...tokens }), token: tokens.accessToken }
}

/**
 * fetch's own message for a network failure is only `fetch failed`; its cause says why
 * (`connect ECONNREFUSED 127.0.0.1:8080`, `getaddrinfo ENOTFOUND`). Other errors pass unchanged.
 */
export function describeFailure (error: unknown, url: string): Error {
  if (!(error instanceof TypeError) || error.cause === undefined) return error instanceof Error ? error : new Error(String(error))
  const cause = error.cause instanceof Error ? error.cause.message : String(error.cause)
  return new Error(`cannot reach ${url} (${cause}): is the server running, and is --url its REST base URL?`, { cause: error })
}

/** Runs the fleet until `duration` passes or `stop` aborts; resolves with the summary. */
export async function runSimulation (options: SimulateOptions, io: CliIo, stop: AbortSignal): Promise<SimulateSummary> {
  const { client, token } = await connect(options).catch((error: unknown) => { throw describeFailure(error, options.url) })
  const started = performance.now()
  let notifications = 0
  let errors = 0
  let lastError = ''
  const onError = (error: unknown): void => {
    errors++
    lastError = describeFailure(error, options.url).message
  }
  const ids = Array.from({ length: options.devices }, (_, i) => `${options.prefix}${i + 1}`)
  const devices: SimulatedDevice[] = []
  const commands = (): number => devices.reduce((sum, d) => sum + d.handled, 0)

  const progress = (final: boolean): void => {
    const seconds = (performance.now() - started) / 1000
    const line = `devices ${devices.length}/${ids.length} connected · ${(notifications / Math.max(seconds, 0.001)).toFixed(1)} msg/s` +
      ` · ${notifications} sent · ${commands()} commands answered · ${errors} errors${lastError === '' ? '' : ` (last: ${lastError})`}`
    if (io.isTTY === true && !final) io.progress?.(line)
    else io.err(line)
  }
  const timer = setInterval(() => progress(false), options.progressMs ?? 1000)

  try {
    const info = await client.info().catch((error: unknown) => { throw describeFailure(error, options.url) })
    const since = info.serverTimestamp
    for (const id of ids) {
      if (stop.aborted) break
      try {
        await client.putDevice(id, { name: `simulated ${id}`, networkId: options.networkId })
        const device = createSimulatedDevice({
          client,
          deviceId: id,
          since,
          behaviour: (command) => ({ echo: command.parameters }),
          onError,
          transport: options.transport,
          webSocketUrl: info.webSocketServerUrl,
          token
        })
        await device.start()
        devices.push(device)
      } catch (error) {
        onError(error)
      }
    }
    // Notifications at the fleet rate: a fraction per tick, carried over so low rates work too.
    let due = 0
    let next = 0
    const deadline = options.duration > 0 ? started + options.duration : Infinity
    while (!stop.aborted && performance.now() < deadline && devices.length > 0) {
      due += options.rate * TICK_MS / 1000
      const sends: Array<Promise<unknown>> = []
      for (; due >= 1; due--) {
        const device = devices[next++ % devices.length]!
        sends.push(client.sendNotification(
          device.deviceId, { notification: 'simulated', parameters: { seq: notifications + sends.length + 1 } }
        )
          .then(() => { notifications++ }, onError))
      }
      await Promise.all([...sends, new Promise((resolve) => setTimeout(resolve, TICK_MS))])
    }
    if (devices.length === 0 && !stop.aborted) throw new Error(`no device could be registered (${lastError})`)
  } finally {
    clearInterval(timer)
    await Promise.all(devices.map((d) => d.stop()))
  }
  progress(true)
  return { devices: devices.length, notifications, commands: commands(), errors, seconds: (performance.now() - started) / 1000 }
}
