import t from 'tap'
import { spawnSync } from 'node:child_process'
import { tuneGarbageCollector } from '../../lib/cli/memory-tuning.js'

t.test('two cores or fewer: the young generation kept small and scavenged on the main thread', async (t) => {
  for (const cores of [1, 2]) {
    const set: string[] = []
    const flags = tuneGarbageCollector(cores, (flag) => set.push(flag))
    t.same(flags, ['--semi-space-growth-factor=1', '--no-parallel-scavenge'], `${cores} core(s)`)
    t.same(set, flags, 'each flag is set')
  }
})

t.test('more cores: parallel scavenges stay on', async (t) => {
  const set: string[] = []
  t.same(tuneGarbageCollector(8, (flag) => set.push(flag)), ['--semi-space-growth-factor=1'])
  t.same(set, ['--semi-space-growth-factor=1'])
})

// setFlagsFromString ignores a flag V8 does not know; the command line refuses one, so a flag
// renamed by a later V8 shows here, on every Node.js line CI runs.
t.test('this V8 knows every flag', async (t) => {
  const flags = tuneGarbageCollector(1, () => undefined)
  const run = spawnSync(process.execPath, [...flags, '-e', '0'], { encoding: 'utf8' })
  t.equal(run.status, 0, run.stderr)
  const bogus = spawnSync(process.execPath, ['--no-such-v8-flag-here', '-e', '0'], { encoding: 'utf8' })
  t.not(bogus.status, 0, 'an unknown flag is refused (the check above means something)')
})
