/**
 * Runs `process.nextTick` hot before the server takes load (issue #26). Node's streams call it
 * several times per HTTP request, and it builds each tick as an object literal with computed
 * symbol keys. On Node 20 (V8 11.3), when V8 first optimised `nextTick` under a loaded server's
 * mix of callers, in 4 of 7 starts it kept building those objects through its runtime
 * (`Runtime_DefineKeyedOwnPropertyInLiteral`) for the life of the process: 5-6% of the event loop
 * in `perf` recordings of the insert benchmark, 51-54 µs of CPU per insert against 47-49 µs in
 * the other starts. With this warm-up first, none of 17 starts did. Node 24 showed it in none of
 * 3 starts without it. It takes a few milliseconds, once.
 */

/** Ticks per round, and rounds (each ends with a turn of the event loop, so V8 can install optimised code). */
const TICKS = 1000
const ROUNDS = 10

/**
 * @example
 * await warmNextTick() // before app.listen()
 */
export async function warmNextTick (): Promise<void> {
  const noop = (): void => {}
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < TICKS; i++) process.nextTick(noop)
    await new Promise<void>((resolve) => setImmediate(resolve))
  }
}
