/**
 * The first-start bootstrap of a hub, run now or deferred until the server listens, and the
 * signal servers hold requests on until it is done: before it, the admin may not exist yet, and
 * a login with the right password would get 401 (issue #22).
 */
import type { BootstrapResult } from '../bootstrap.js'

export interface Initialisation {
  /** What the bootstrap did (a placeholder until a deferred one ran). */
  readonly result: BootstrapResult
  /** True once the first-start data exists. */
  readonly done: boolean
  /** Runs the bootstrap once (idempotent); later calls return the same promise. */
  run(): Promise<BootstrapResult>
  /** Resolves once done; rejects when the bootstrap failed or {@link abandon} came first. */
  settled(): Promise<void>
  /** The hub closes: whoever still waits is let go (with a rejection). */
  abandon(): void
}

/**
 * @example
 * const init = await createInitialisation(() => ensureInitialData(store), { deferred: true })
 * await app.listen({ port: 8080 })
 * await init.run()
 */
export async function createInitialisation (
  bootstrap: () => Promise<BootstrapResult>,
  options: { deferred: boolean, placeholder: BootstrapResult }
): Promise<Initialisation> {
  let result = options.deferred ? options.placeholder : await bootstrap()
  let done = !options.deferred
  let running: Promise<BootstrapResult> | undefined = done ? Promise.resolve(result) : undefined
  let resolve!: () => void
  let reject!: (error: unknown) => void
  const signal = new Promise<void>((yes, no) => { resolve = yes; reject = no })
  // Nobody may be waiting when it fails: that is not an unhandled rejection.
  signal.catch(() => {})
  if (done) resolve()
  return {
    get result () {
      return result
    },
    get done () {
      return done
    },
    run () {
      running ??= bootstrap().then((value) => {
        result = value
        done = true
        resolve()
        return value
      }, (error: unknown) => {
        reject(error)
        throw error
      })
      return running
    },
    settled: () => signal,
    abandon () {
      reject(new Error('the hub closed before its first-start initialisation'))
    }
  }
}
