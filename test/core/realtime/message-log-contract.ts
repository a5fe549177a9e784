/**
 * The message-log contract (lib/testing/contracts) on this run's store: SQLite, PostgreSQL with
 * DEVICEHUB_TEST_PG_URL, and PostgreSQL with its bus with DEVICEHUB_TEST_PG_DOORBELL=1 too
 * (the dialect's ordering then orders out-of-order commits and keeps the mark). On SQLite also on
 * a file (WAL, the background checkpoints), as `devicehub serve` runs it.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { createDeviceHub } from '../../../lib/core/devicehub.js'
import { createPostgresDoorbell } from '../../../lib/doorbells/postgres-doorbell.js'
import { openSqliteStore } from '../../../lib/store/dialects/sqlite.js'
import { postgresOrdering } from '../../../lib/store/ordering/postgres-ordering.js'
import { messageLogContract } from '../../../lib/testing/contracts/message-log-contract.js'
import { runContract } from '../../fixtures/contract.js'
import { openTestStore, testPostgresUrl, testStoreSchemas } from '../../fixtures/store.js'

t.test('the message-log contract', async (t) => {
  runContract(t, messageLogContract, { make: async () => ({
    async open () {
      const store = await openTestStore(t)
      const url = testPostgresUrl()
      const schema = testStoreSchemas.get(store)
      const bus = process.env.DEVICEHUB_TEST_PG_DOORBELL === '1' && url !== undefined && schema !== undefined
        ? await createPostgresDoorbell(url, { channel: schema })
        : undefined
      const ordering = bus === undefined ? undefined : postgresOrdering(store, bus)
      const hub = await createDeviceHub({ store, bus, ordering, admin: { password: 'log-contract-1' } })
      return { log: hub.log, store: hub.store, bus: hub.bus, close: () => hub.close() }
    }
  }) })
})

t.test('the message-log contract on a SQLite file', { skip: testPostgresUrl() !== undefined && 'a PostgreSQL run' }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'devicehub-log-contract-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  let n = 0
  runContract(t, messageLogContract, { make: async () => ({
    async open () {
      const store = await openSqliteStore(join(dir, `log-${n++}.db`))
      const hub = await createDeviceHub({ store, admin: { password: 'log-contract-1' } })
      return { log: hub.log, store: hub.store, bus: hub.bus, close: async () => { await hub.close(); await store.close() } }
    }
  }) })
})
