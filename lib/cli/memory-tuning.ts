import { availableParallelism } from 'node:os'
import { setFlagsFromString } from 'node:v8'

/**
 * V8 doubles its young generation (up to 2 x 16 MB) whenever many young objects survive, as at
 * startup and while thousands of long polls park, and does not give it back while the server is
 * busy. Keeping it at its initial size holds 10,000 parked polls under 200 MB (about 25 MB less)
 * for about 10-15% more CPU per request (more frequent scavenges). V8 reads this flag each time
 * it would grow the young generation, so setting it at run time takes effect.
 */
const KEEP_YOUNG_GENERATION_SMALL = '--semi-space-growth-factor=1'

/**
 * V8 splits each young-generation collection (scavenge) over helper threads and the event loop
 * waits until they are done. With two cores or fewer those threads compete with the event loop's
 * own peers (the SQLite checkpointer, clients on the same machine), and a scavenge of about 1 MB of
 * survivors held the loop 4-8 ms, sometimes 14. Scavenging on the main thread alone: push p99 of
 * MQTT telemetry at 1,000/s 14-16 -> 7-11 ms, CPU per push 3-8% lower (bench/README.md). V8 reads
 * the flag at each scavenge.
 */
const SCAVENGE_ON_MAIN_THREAD = '--no-parallel-scavenge'

/**
 * The V8 settings `devicehub serve` runs with, set at run time; returns the flags it set. Only the
 * CLI calls this: a library must not change the V8 flags of the process that embeds it.
 *
 * @example
 * tuneGarbageCollector() // ['--semi-space-growth-factor=1', '--no-parallel-scavenge'] on 2 cores
 */
export function tuneGarbageCollector (
  cores: number = availableParallelism(), setFlags: (flag: string) => void = setFlagsFromString
): string[] {
  const flags = [KEEP_YOUNG_GENERATION_SMALL, ...(cores <= 2 ? [SCAVENGE_ON_MAIN_THREAD] : [])]
  for (const flag of flags) setFlags(flag)
  return flags
}
