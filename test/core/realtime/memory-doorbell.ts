import t from 'tap'
import { createMemoryDoorbell } from '../../../lib/core/realtime/memory-doorbell.js'
import { openSqliteStore } from '../../../lib/store/dialects/sqlite.js'
import { busContract } from '../../../lib/testing/contracts/bus-contract.js'
import { runContract } from '../../fixtures/contract.js'

t.test('the bus contract', async (t) => {
  runContract(t, busContract, { make: async () => ({ createBus: () => createMemoryDoorbell(), openStore: () => openSqliteStore(':memory:') }) })
})

t.test('size counts listeners, so tests can check nothing leaks', async (t) => {
  const doorbell = createMemoryDoorbell()
  const offs = [doorbell.subscribe(() => {}), doorbell.subscribe(() => {})]
  t.equal(doorbell.size, 2)
  for (const off of offs) off()
  t.equal(doorbell.size, 0)
})
