import t from 'tap'
import { openSqliteStore } from '../../lib/store/dialects/sqlite.js'
import { storeContract } from '../fixtures/store-contract.js'

storeContract(t, async (t) => {
  const store = await openSqliteStore(':memory:')
  t.teardown(() => store.close())
  return store
})
