/**
 * The message-log contract (lib/testing/contracts) on this run's store: SQLite, PostgreSQL with
 * DEVICEHUB_TEST_PG_URL, and PostgreSQL with its bus with DEVICEHUB_TEST_PG_DOORBELL=1 too
 * (the dialect's ordering then orders out-of-order commits and keeps the mark).
 */
import t from 'tap'
import { createDeviceHub } from '../../../lib/core/devicehub.js'
import { createPostgresDoorbell } from '../../../lib/doorbells/postgres-doorbell.js'
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
