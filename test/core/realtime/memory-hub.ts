import t from 'tap'
import { createMemoryHub } from '../../../lib/core/realtime/memory-hub.js'
import { openSqliteStore } from '../../../lib/store/dialects/sqlite.js'
import { hubContract } from '../../fixtures/hub-contract.js'

hubContract(t, { createHub: () => createMemoryHub(), openStore: () => openSqliteStore(':memory:') })

t.test('size counts listeners, so tests can check nothing leaks', async (t) => {
  const hub = createMemoryHub()
  const offs = [hub.subscribe(() => {}), hub.subscribe(() => {})]
  t.equal(hub.size, 2)
  for (const off of offs) off()
  t.equal(hub.size, 0)
})
