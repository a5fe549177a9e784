/**
 * `Store.watchOtherWriters` on SQLite: another connection's commit to the file is seen within an
 * interval or two, the store's own writes (and its checkpointer's) never are.
 */
import t from 'tap'
import { join } from 'node:path'
import { openSqliteStore } from '../../lib/store/dialects/sqlite.js'
import { OTHER_WRITERS_INTERVAL_MS } from '../../lib/store/dialects/sqlite-other-writers.js'

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
const network = (name: string): { name: string, description: null } => ({ name, description: null })

t.test('another connection\'s commit calls the listener; the store\'s own writes do not', async (t) => {
  const file = join(t.testdir(), 'hub.db')
  const store = await openSqliteStore(file)
  const other = await openSqliteStore(file)
  t.teardown(async () => {
    await other.close()
    await store.close()
  })
  let heard = 0
  const off = store.watchOtherWriters(() => { heard++ })

  for (let i = 0; i < 50; i++) await store.networks.insert(network(`own-${i}`))
  await sleep(OTHER_WRITERS_INTERVAL_MS * 3)
  t.equal(heard, 0, 'fifty own commits (and the checkpointer meanwhile) are not another writer')

  await other.networks.insert(network('theirs'))
  const started = Date.now()
  while (heard === 0 && Date.now() - started < OTHER_WRITERS_INTERVAL_MS * 8) await sleep(20)
  t.equal(heard, 1, 'another connection\'s commit is heard once')

  await sleep(OTHER_WRITERS_INTERVAL_MS * 2)
  t.equal(heard, 1, 'and only once')

  off()
  off()
  await other.networks.insert(network('unheard'))
  await sleep(OTHER_WRITERS_INTERVAL_MS * 2)
  t.equal(heard, 1, 'nothing after the listener is removed (removing twice is harmless)')
})

t.test('a listener that throws does not keep the others from hearing; closing the store stops the timer', async (t) => {
  const file = join(t.testdir(), 'hub.db')
  const store = await openSqliteStore(file)
  const other = await openSqliteStore(file)
  let heard = 0
  store.watchOtherWriters(() => { throw new Error('listener failed') })
  store.watchOtherWriters(() => { heard++ })
  await other.networks.insert(network('theirs'))
  const started = Date.now()
  while (heard === 0 && Date.now() - started < OTHER_WRITERS_INTERVAL_MS * 8) await sleep(20)
  t.equal(heard, 1)
  await store.close()
  await other.networks.insert(network('after close'))
  await sleep(OTHER_WRITERS_INTERVAL_MS * 2)
  t.equal(heard, 1, 'a closed store hears nothing, and its timer threw nothing')
  t.equal(typeof store.watchOtherWriters(() => {}), 'function', 'watching a closed store is a no-op')
  await other.close()
})

t.test('in memory there is no other writer', async (t) => {
  const store = await openSqliteStore(':memory:')
  const off = store.watchOtherWriters(() => t.fail('never called'))
  await sleep(OTHER_WRITERS_INTERVAL_MS * 2)
  off()
  await store.close()
  t.pass('no call, no timer')
})
