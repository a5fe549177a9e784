/**
 * Two instances over one PostgreSQL database: a write on A to rows every request reads (a device
 * moved, a user's networks) reaches B's read cache at commit (a `stale-reads` bus event), not
 * when B's cached rows age out (10 s).
 */
import { randomBytes } from 'node:crypto'
import t from 'tap'
import { createDeviceHub } from '../../lib/core/devicehub.js'
import type { DeviceHub } from '../../lib/core/devicehub.js'
import { createPostgresDoorbell } from '../../lib/doorbells/postgres-doorbell.js'
import {
  decodeDoorbellEvent, decodeDoorbellEvents, encodeDoorbellEvent, isRevokePayload, isStaleReadsPayload
} from '../../lib/doorbells/postgres-doorbell-wire.js'
import { buildServer } from '../../lib/http/build-server.js'
import { openPostgresStore } from '../../lib/store/dialects/postgres.js'
import { DEFAULT_READ_CACHE_TTL_MS } from '../../lib/store/read-cache.js'
import { postgresOrdering } from '../../lib/store/ordering/postgres-ordering.js'
import { ADMIN_PASSWORD, JWT_SECRET } from '../fixtures/app.js'
import { sleep } from '../fixtures/messaging.js'
import { dropSchema, uniqueSchemaName } from '../fixtures/store.js'
import { postgresTest } from '../fixtures/pg-database.js'

/** A NOTIFY crosses instances in milliseconds: well under the cache's age, which would otherwise bound it. */
const SEEN_WITHIN_MS = 2000

type Rest = (method: string, path: string, token: string, body?: unknown) => Promise<{ status: number, body: any }> // eslint-disable-line @typescript-eslint/no-explicit-any

function restOf (base: string): Rest {
  return async (method, path, token, body) => {
    const res = await fetch(`${base}/api/rest${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body)
    })
    const text = await res.text()
    return { status: res.status, body: text === '' ? undefined : JSON.parse(text) }
  }
}

/** Milliseconds until `check` holds, asked every 20 ms; fails past `SEEN_WITHIN_MS`. */
async function until (check: () => Promise<boolean>): Promise<number> {
  const started = Date.now()
  while (!(await check())) {
    if (Date.now() - started > SEEN_WITHIN_MS) throw new Error(`not seen within ${SEEN_WITHIN_MS} ms`)
    await sleep(20)
  }
  return Date.now() - started
}

t.test('the wire form: six elements, one payload for every copy, told without parsing', async (t) => {
  const payload = encodeDoorbellEvent({ kind: 'stale-reads' })
  t.equal(payload, '["stale-reads",0,"",null,null,""]')
  t.same(decodeDoorbellEvent(payload), { kind: 'stale-reads' })
  t.same(decodeDoorbellEvents(payload), [{ kind: 'stale-reads' }])
  t.ok(isStaleReadsPayload(payload))
  t.notOk(isRevokePayload(payload))
  t.same(decodeDoorbellEvents('["stale-reads",0,"",null,null,"",null]'), [], 'another length is malformed')
})

postgresTest('stale reads cross instances', async (t, url) => {
  t.ok(DEFAULT_READ_CACHE_TTL_MS > 4 * SEEN_WITHIN_MS, 'the cache alone would serve the old rows far longer than this test waits')
  const schema = uniqueSchemaName()
  const channel = `devicehub_test_${randomBytes(6).toString('hex')}`
  const hubs: DeviceHub[] = []
  t.teardown(async () => {
    for (const hub of hubs) await hub.close()
    await dropSchema(url, schema)
  })
  const start = async (): Promise<{ hub: DeviceHub, rest: Rest }> => {
    const store = await openPostgresStore(url, { schema, maxConnections: 3 })
    const doorbell = await createPostgresDoorbell(url, { channel })
    const hub = await createDeviceHub({
      store, bus: doorbell, ordering: postgresOrdering(store, doorbell), jwtSecret: JWT_SECRET, admin: { password: ADMIN_PASSWORD }
    })
    hubs.push(hub)
    const app = await buildServer({ hub, closeHub: false })
    t.teardown(() => app.close())
    return { hub, rest: restOf(await app.listen({ port: 0, host: '127.0.0.1' })) }
  }
  const a = await start()
  const b = await start()
  const { accessToken: admin } = await a.hub.tokens.issueForUser(1)
  const other = await a.rest('POST', '/network', admin, { name: 'stale-reads-other', description: null })
  t.equal(other.status, 201)
  const user = await a.rest('POST', '/user', admin, { login: 'stale-reads-client', role: 1, status: 0, password: 'client-password-1' })
  t.equal(user.status, 201)
  t.equal((await a.rest('PUT', `/user/${user.body.id}/network/1`, admin)).status, 204)
  t.equal((await a.rest('PUT', '/device/sr-dev', admin, { name: 'd', networkId: 1, deviceTypeId: 1 })).status, 204)
  const { accessToken: client } = await b.hub.tokens.issueForUser(user.body.id)

  // B reads (and caches) the device, the client and its networks.
  t.equal((await b.rest('GET', '/device/sr-dev', client)).status, 200, 'the client reaches the device through B')
  t.equal((await b.rest('GET', '/device/sr-dev', admin)).body.name, 'd')

  t.test('a device moved on A out of the client\'s network is refused on B at once', async (t) => {
    t.equal((await a.rest('PUT', '/device/sr-dev', admin, { name: 'moved', networkId: other.body.id, deviceTypeId: 1 })).status, 204)
    const ms = await until(async () => (await b.rest('GET', '/device/sr-dev', client)).status !== 200)
    t.ok(ms < SEEN_WITHIN_MS, `refused on B ${ms} ms after the move`)
    const refused = await b.rest('GET', '/device/sr-dev', client)
    t.ok([403, 404].includes(refused.status), `refused with ${refused.status}`)
    t.equal((await b.rest('GET', '/device/sr-dev', admin)).body.name, 'moved', 'B serves the row as A wrote it')
    const posted = await b.rest('POST', '/device/sr-dev/command', client, { command: 'not-yours' })
    t.ok([403, 404].includes(posted.status), 'nor can the client command it there')
  })

  t.test('a network assigned on A (a gain, which revokes nothing) is in the next token B issues at once', async (t) => {
    t.equal((await a.rest('PUT', `/user/${user.body.id}/network/${other.body.id}`, admin)).status, 204)
    // A token names the networks its user had when it was issued: B reads them through its cache.
    const ms = await until(async () => {
      const { accessToken } = await b.hub.tokens.issueForUser(user.body.id)
      return (await b.rest('GET', '/device/sr-dev', accessToken)).status === 200
    })
    t.ok(ms < SEEN_WITHIN_MS, `reached on B ${ms} ms after the assignment`)
  })
})
