import t from 'tap'
import { openPostgresStore } from '../../lib/store/dialects/postgres.js'
import { storeContract } from '../fixtures/store-contract.js'
import { dropSchema, testPostgresUrl, uniqueSchemaName } from '../fixtures/store.js'

const url = testPostgresUrl()

if (url === undefined) {
  t.pass('DEVICEHUB_TEST_PG_URL not set: the PostgreSQL store contract did not run')
} else {
  storeContract(t, async (t) => {
    const schema = uniqueSchemaName()
    const store = await openPostgresStore(url, { schema, maxConnections: 4 })
    t.teardown(async () => {
      await store.close()
      await dropSchema(url, schema)
    })
    return store
  })
}
