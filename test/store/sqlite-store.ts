import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openSqliteStore } from '../../lib/store/dialects/sqlite.js'
import { storeContract } from '../../lib/testing/contracts/store-contract.js'
import { runContract } from '../fixtures/contract.js'

t.test('in memory', async (t) => {
  runContract(t, storeContract, {
    make: async () => ({ store: await openSqliteStore(':memory:') }),
    destroy: ({ store }) => store.close()
  })
})

t.test('on a file', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'devicehub-contract-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  let n = 0
  runContract(t, storeContract, {
    make: async () => {
      const file = join(dir, `store-${n++}.db`)
      const subject = {
        store: await openSqliteStore(file),
        // The durability check reads the file again through a new store.
        reopen: async () => {
          await subject.store.close()
          subject.store = await openSqliteStore(file)
          return subject.store
        }
      }
      return subject
    },
    destroy: ({ store }) => store.close()
  })
})
