import t from 'tap'
import type { Router } from '../../../lib/core/realtime/router.js'
import type { TestApp } from '../../fixtures/app.js'
import { createTestApp } from '../../fixtures/app.js'
import { addDevice, call, eventually, listen, sleep } from '../../fixtures/messaging.js'

/** The hub's routing index: every parked waiter is registered there. */
const doorbellOf = (h: TestApp): Router => h.hub.router

/** Starts a request and waits until its waiter has subscribed to the hub. */
async function parked<T> (h: TestApp, start: () => Promise<T>): Promise<{ result: Promise<T> }> {
  const before = doorbellOf(h).size
  const result = start()
  await eventually(() => doorbellOf(h).size > before)
  await sleep(20) // let the backlog read finish: the item below must arrive as a live event
  return { result } // wrapped: an async function would otherwise wait for the answer itself
}

t.test('notification poll: backlog at once, oldest first; strict cursor; none without timestamp', async (t) => {
  // Cursors follow the server's clock (issue #16), so the items get their times from it.
  let now = Date.UTC(2020, 0, 1, 10)
  const h = await createTestApp(t, { clock: { now: () => now } })
  const device = await addDevice(h)
  const ids: number[] = []
  for (const i of [0, 1, 2]) {
    now = Date.UTC(2020, 0, 1, 10) + i
    ids.push((await h.request('POST', `/device/${device}/notification`, { body: { notification: `n${i}`, parameters: { i } } })).body.id)
  }
  const res = await h.request('GET', `/device/${device}/notification/poll`, { query: { timestamp: String(Date.UTC(2019, 0, 1)) } })
  t.equal(res.status, 200)
  t.same(res.body, [0, 1, 2].map((i) => ({ id: ids[i], notification: `n${i}`, deviceId: device, networkId: 1, deviceTypeId: 1, timestamp: `2020-01-01T10:00:00.00${i}`, parameters: { i } })))
  const after = await h.request('GET', `/device/${device}/notification/poll`, { query: { timestamp: '2020-01-01T10:00:00.001', waitTimeout: 0 } })
  t.same(after.body.map((n: { id: number }) => n.id), [ids[2]], 'strictly after the cursor')
  const names = await h.request('GET', `/device/${device}/notification/poll`, { query: { timestamp: '2019-01-01', names: 'n0,n2', waitTimeout: 0 } })
  t.same(names.body.map((n: { id: number }) => n.id), [ids[0], ids[2]])
  const none = await h.request('GET', `/device/${device}/notification/poll`, { query: { waitTimeout: 0 } })
  t.same(none.body, [], 'no timestamp: cursor is now')
  t.equal(doorbellOf(h).size, 0)
})

t.test('notification poll: the first matching live item, non-matching ones skipped; [] on timeout', async (t) => {
  const h = await createTestApp(t)
  const device = await addDevice(h)
  const other = await addDevice(h)
  const network = await h.store.networks.insert({ name: 'Elsewhere', description: null })
  const outside = await addDevice(h, undefined, { networkId: network })
  const client = await h.createUser({ networkIds: [1] })

  const many = await parked(h, () => h.request('GET', '/device/notification/poll', { token: client.accessToken, query: { names: 'wanted' } }))
  const one = await parked(h, () => h.request('GET', `/device/${device}/notification/poll`, { query: { names: 'wanted' } }))
  await h.request('POST', `/device/${device}/notification`, { body: { notification: 'other-name' } })
  await h.request('POST', `/device/${outside}/notification`, { body: { notification: 'wanted' } })
  const hit = await h.request('POST', `/device/${other}/notification`, { body: { notification: 'wanted' } })
  const manyRes = await many.result
  t.equal(manyRes.status, 200)
  t.same(manyRes.body.map((n: { id: number }) => n.id), [hit.body.id], 'the client sees only its network')
  const wanted = await h.request('POST', `/device/${device}/notification`, { body: { notification: 'wanted', parameters: { v: 1 } } })
  const oneRes = await one.result
  t.same(oneRes.body, [{ id: wanted.body.id, notification: 'wanted', deviceId: device, networkId: 1, deviceTypeId: 1, timestamp: wanted.body.timestamp, parameters: { v: 1 } }])

  const started = Date.now()
  const timedOut = await h.request('GET', `/device/${device}/notification/poll`, { query: { waitTimeout: 1 } })
  t.equal(timedOut.status, 200)
  t.same(timedOut.body, [])
  t.ok(Date.now() - started >= 900, 'waited for the timeout')
  t.equal(doorbellOf(h).size, 0, 'no listener left behind')
})

t.test('poll parameters are validated with the contract\'s messages', async (t) => {
  const h = await createTestApp(t)
  const device = await addDevice(h)
  const paths = [`/device/${device}/command/poll`, '/device/command/poll', `/device/${device}/notification/poll`, '/device/notification/poll', `/device/${device}/command/1/poll`]
  for (const path of paths) {
    t.same((await h.request('GET', path, { query: { waitTimeout: -1 } })).body, { error: 400, message: 'Timeout can\'t be less than 0 seconds. ' }, path)
    t.same((await h.request('GET', path, { query: { waitTimeout: 61 } })).body, { error: 400, message: 'Timeout can\'t be more than 60 seconds. ' }, path)
    t.same((await h.request('GET', path, { query: { waitTimeout: 'soon' } })).body, { error: 400, message: 'Invalid request parameters' }, path)
    t.same((await h.request('GET', path, { token: null })).body, { error: 401, message: 'Unauthorized' }, path)
  }
  for (const path of paths.slice(0, 4)) {
    t.same((await h.request('GET', path, { query: { timestamp: 'whenever' } })).body, { error: 400, message: 'Unparseable timestamp' }, path)
  }
  t.same((await h.request('GET', '/device/command/poll', { query: { limit: -1 } })).body, { error: 400, message: 'Limit can\'t be less than 0.' })
  t.same((await h.request('GET', '/device/command/poll', { query: { deviceId: '' } })).body, { error: 400, message: 'Device id is wrong or empty' })
  t.same((await h.request('GET', '/device/notification/poll', { query: { networkIds: '1,x' } })).body, { error: 400, message: 'Invalid request parameters' })
  t.same((await h.request('GET', '/device/command/poll', { query: { deviceId: 'ghost', waitTimeout: 0 } })).body, { error: 404, message: 'Device with such deviceId = ghost not found' })
  t.same((await h.request('GET', '/device/ghost/notification/poll', { query: { waitTimeout: 0 } })).body, { error: 404, message: 'Device with such deviceId = ghost not found' })
  t.same((await h.request('GET', '/device/command/poll', { query: { networkIds: '1,7,9', waitTimeout: 0 } })).body, { error: 404, message: 'Networks with such networkIds wasn\'t found: {[7, 9]}' })
  t.same((await h.request('GET', '/device/notification/poll', { query: { deviceTypeIds: '3', waitTimeout: 0 } })).body, { error: 404, message: 'Device types with such deviceTypeIds wasn\'t found: {[3]}' })
})

t.test('scope: named networks, device types and devices outside the caller\'s scope are refused by role (D7)', async (t) => {
  const h = await createTestApp(t)
  const network = await h.store.networks.insert({ name: 'Secret', description: null })
  const secret = await addDevice(h, undefined, { networkId: network })
  const mine = await addDevice(h)
  const client = await h.createUser({ networkIds: [1] })
  const token = client.accessToken
  const old = String(Date.UTC(2000, 0, 1))
  await h.request('POST', `/device/${secret}/command`, { body: { command: 'c' } })
  const visible = (await h.request('POST', `/device/${mine}/command`, { body: { command: 'c' } })).body.id
  const denied = { error: 403, message: 'Access is denied' }
  // A client gets 403 for anything it cannot see, existing or not.
  const queries: Array<Record<string, string>> = [{ networkIds: String(network) }, { networkIds: '999999' }, { deviceTypeIds: '999999' }, { deviceId: secret }, { deviceId: 'no-such' }, { deviceIds: `${mine},${secret}` }]
  for (const query of queries) {
    t.same((await h.request('GET', '/device/command/poll', { token, query: { ...query, waitTimeout: 0 } })).body, denied, `client ${JSON.stringify(query)}`)
    t.same((await h.request('GET', '/device/notification/poll', { token, query: { ...query, waitTimeout: 0 } })).body, denied)
  }
  t.same((await h.request('GET', `/device/${secret}/command/poll`, { token, query: { waitTimeout: 0 } })).body, denied)
  t.same((await h.request('GET', '/device/no-such/notification/poll', { token, query: { waitTimeout: 0 } })).body, denied)
  // An administrator gets 404 naming what it cannot find, even with a narrowed token.
  const narrowAdmin = h.sign({ u: 1, a: [0], n: ['1'], dt: ['*'], e: Date.now() + 60_000, t: 1 })
  t.same((await h.request('GET', '/device/command/poll', { token: narrowAdmin, query: { networkIds: `${network},999999`, waitTimeout: 0 } })).body,
    { error: 404, message: `Networks with such networkIds wasn't found: {[${network}, 999999]}` })
  t.same((await h.request('GET', '/device/command/poll', { query: { deviceTypeIds: '999999', waitTimeout: 0 } })).body,
    { error: 404, message: 'Device types with such deviceTypeIds wasn\'t found: {[999999]}' })
  t.same((await h.request('GET', '/device/command/poll', { token: narrowAdmin, query: { deviceId: secret, waitTimeout: 0 } })).body, { error: 404, message: `Device with such deviceId = ${secret} not found` })
  t.same((await h.request('GET', '/device/notification/poll', { query: { deviceIds: `${mine},nope`, waitTimeout: 0 } })).body, { error: 404, message: 'Device with such deviceId = nope not found' })
  // The device form follows the token's scope: restricted 403, full scope 404.
  t.same((await h.request('GET', `/device/${secret}/command/poll`, { token: narrowAdmin, query: { waitTimeout: 0 } })).body, denied)
  t.same((await h.request('GET', '/device/nope/command/poll', { query: { waitTimeout: 0 } })).body, { error: 404, message: 'Device with such deviceId = nope not found' })
  const all = await h.request('GET', '/device/command/poll', { token, query: { timestamp: old, waitTimeout: 0 } })
  t.same(all.body.map((c: { id: number }) => c.id), [visible], 'no filter: only the caller\'s devices')
  const admin = await h.request('GET', '/device/command/poll', { query: { timestamp: old, waitTimeout: 0 } })
  t.equal(admin.body.length, 2)
  const narrowed = await h.request('GET', '/device/command/poll', { query: { timestamp: old, waitTimeout: 0, deviceIds: mine } })
  t.same(narrowed.body.map((c: { id: number }) => c.id), [visible], 'R2: deviceIds narrows')
  const both = await h.request('GET', '/device/command/poll', { query: { timestamp: old, waitTimeout: 0, deviceId: secret, deviceIds: mine } })
  t.same(both.body, [], 'deviceId and deviceIds narrow together')
  const byNetwork = await h.request('GET', '/device/command/poll', { query: { timestamp: old, waitTimeout: 0, networkIds: String(network), deviceTypeIds: '1' } })
  t.equal(byNetwork.body.length, 1)
  t.equal(byNetwork.body[0].deviceId, secret)

  const nothing = await h.createUser({ networkIds: [] })
  const empty = await h.request('GET', '/device/notification/poll', { token: nothing.accessToken, query: { timestamp: old } })
  t.same(empty.body, [], 'an empty scope answers [] at once')
  const named = await h.request('GET', '/device/notification/poll', { token: nothing.accessToken, query: { networkIds: '1', timestamp: old } })
  t.same(named.body, denied, 'naming a network outside an empty scope is refused')
})

t.test('command poll: limit, limit=0, strict cursor, updates do not wake ordinary pollers', async (t) => {
  let now = Date.UTC(2020, 0, 1, 10)
  const h = await createTestApp(t, { clock: { now: () => now } })
  const device = await addDevice(h)
  const ids: number[] = []
  for (let i = 0; i < 5; i++) {
    now = Date.UTC(2020, 0, 1, 10) + i * 1000
    ids.push((await h.request('POST', `/device/${device}/command`, { body: { command: 'c' } })).body.id)
  }
  now = Date.UTC(2020, 0, 1, 10, 0, 10)
  const limited = await h.request('GET', `/device/${device}/command/poll`, { query: { timestamp: '2019-01-01', limit: 3 } })
  t.same(limited.body.map((c: { id: number }) => c.id), ids.slice(0, 3), 'the oldest `limit` items')
  // limit=0 is no limit (§7.3, as Java 3.x): the Python client sends it on every poll after its probe.
  const unlimited = await h.request('GET', `/device/${device}/command/poll`, { query: { timestamp: '2019-01-01', limit: 0, waitTimeout: 0 } })
  t.same(unlimited.body.map((c: { id: number }) => c.id), ids, 'limit=0 answers the whole backlog')
  const same = await h.request('GET', `/device/${device}/command/poll`, { query: { timestamp: '2020-01-01T10:00:04.000', waitTimeout: 0 } })
  t.same(same.body, [], 'should not return command with the same timestamp')

  const ordinary = await parked(h, () => h.request('GET', `/device/${device}/command/poll`, { query: { waitTimeout: 1 } }))
  const updates = await parked(h, () => h.request('GET', `/device/${device}/command/poll`, { query: { returnUpdatedCommands: true } }))
  t.equal((await h.request('PUT', `/device/${device}/command/${ids[1]}`, { body: { status: 'Done' } })).status, 204)
  const woke = await updates.result
  t.equal(woke.body.length, 1)
  t.equal(woke.body[0].id, ids[1])
  t.equal(woke.body[0].status, 'Done')
  t.same((await ordinary.result).body, [], 'an update is not a new command')

  const backlog = await h.request('GET', '/device/command/poll', { query: { returnUpdatedCommands: true, timestamp: '2020-01-01', waitTimeout: 0 } })
  t.same(backlog.body.map((c: { id: number }) => c.id), [ids[1]], 'updated commands by lastUpdated')
  const cursor = await h.request('GET', '/device/command/poll', { query: { returnUpdatedCommands: true, timestamp: woke.body[0].lastUpdated, waitTimeout: 0 } })
  t.same(cursor.body, [], 'strict on lastUpdated')
})

t.test('wait for a command: 204 unknown, 200 already updated, 204 on timeout, 200 on update', async (t) => {
  const h = await createTestApp(t)
  const device = await addDevice(h)
  const other = await addDevice(h)
  const id = (await h.request('POST', `/device/${device}/command`, { body: { command: 'c' } })).body.id
  const unknown = await h.request('GET', `/device/${device}/command/999/poll`)
  t.equal(unknown.status, 204)
  t.equal(unknown.text, '')
  t.equal((await h.request('GET', `/device/${other}/command/${id}/poll`)).status, 204, 'another device\'s command is unknown here')
  t.same((await h.request('GET', `/device/${device}/command/abc/poll`)).body, { error: 404, message: 'Command with id = abc not found' })
  t.same((await h.request('GET', `/device/ghost/command/${id}/poll`)).body, { error: 404, message: 'Device with such deviceId = ghost not found' })
  const zero = await h.request('GET', `/device/${device}/command/${id}/poll`, { query: { waitTimeout: 0, names: 'ignored' } })
  t.equal(zero.status, 204)
  t.equal(zero.text, '')

  const waiting = await parked(h, () => h.request('GET', `/device/${device}/command/${id}/poll`))
  await h.request('PUT', `/device/${device}/command/${id}`, { body: { status: 'Done', result: { ok: true } } })
  const done = await waiting.result
  t.equal(done.status, 200)
  t.equal(done.body.id, id)
  t.equal(done.body.status, 'Done')
  t.same(done.body.result, { ok: true })
  const already = await h.request('GET', `/device/${device}/command/${id}/poll`, { query: { waitTimeout: 0 } })
  t.equal(already.status, 200)
  t.same(already.body, done.body)
  t.equal(doorbellOf(h).size, 0)
})

t.test('the wait reads no row for a command released, unanswered or answered; a reused device id owns none', async (t) => {
  const h = await createTestApp(t)
  const device = await addDevice(h)
  const commands = h.hub.store.commands
  const findForDevice = commands.findForDevice
  let reads = 0
  commands.findForDevice = (...args) => {
    reads++
    return findForDevice.apply(commands, args)
  }
  t.teardown(() => { commands.findForDevice = findForDevice })
  const id = (await h.request('POST', `/device/${device}/command`, { body: { command: 'c' } })).body.id as number
  const waiting = await parked(h, () => h.request('GET', `/device/${device}/command/${id}/poll`))
  t.equal(reads, 0, 'the wait started from the released insert')
  await h.request('PUT', `/device/${device}/command/${id}`, { body: { status: 'Done' } })
  const done = await waiting.result
  t.equal(done.body.status, 'Done', 'the update arrives live')
  const already = await h.request('GET', `/device/${device}/command/${id}/poll`)
  t.same(already.body, done.body, 'answered: at once, as stored')
  // The log remembers the device's newest update on SQLite and on PostgreSQL's ordered bus.
  const remembers = h.store.dialect === 'sqlite' || process.env.DEVICEHUB_TEST_PG_DOORBELL === '1'
  let expected = remembers ? 0 : 1
  t.equal(reads, expected, 'an answered command is taken from the log\'s memory of its update')

  // Its device moved to another network since: the memory's command is not the device's as stored.
  const elsewhere = (await h.request('POST', '/network', { body: { name: 'elsewhere', description: null } })).body.id as number
  const moved = (await h.request('POST', `/device/${device}/command`, { body: { command: 'c' } })).body.id as number
  await h.request('PUT', `/device/${device}/command/${moved}`, { body: { status: 'Moved' } })
  t.equal((await h.request('PUT', `/device/${device}`, { body: { name: 'moved', networkId: elsewhere } })).status, 204)
  const afterMove = await h.request('GET', `/device/${device}/command/${moved}/poll`)
  t.equal(afterMove.body.status, 'Moved', 'answered, as stored')
  t.equal(reads, ++expected, 'read from the store')
  t.equal((await h.request('PUT', `/device/${device}`, { body: { name: 'back', networkId: 1 } })).status, 204)

  // The device goes and comes back under its id: its old commands are not its own any more.
  const pending = (await h.request('POST', `/device/${device}/command`, { body: { command: 'c' } })).body.id as number
  t.equal((await h.request('DELETE', `/device/${device}`)).status, 204)
  t.equal((await h.request('PUT', `/device/${device}`, { body: { name: 'again', networkId: 1 } })).status, 204)
  const parkedTooLong = sleep(5000).then(() => 'parked')
  const again = await Promise.race([h.request('GET', `/device/${device}/command/${pending}/poll`), parkedTooLong])
  t.equal(typeof again === 'string' ? again : again.status, 204, 'unknown for the new device: 204 at once')
  t.equal(reads, ++expected, 'read from the store')

  // The same when the device goes with its network.
  const network = (await h.request('POST', '/network', { body: { name: 'short-lived', description: null } })).body.id as number
  t.equal((await h.request('PUT', `/device/${device}`, { body: { name: 'moved', networkId: network } })).status, 204)
  const inNetwork = (await h.request('POST', `/device/${device}/command`, { body: { command: 'c' } })).body.id as number
  t.equal((await h.request('DELETE', `/network/${network}`, { query: { force: true } })).status, 204)
  t.equal((await h.request('PUT', `/device/${device}`, { body: { name: 'back', networkId: 1 } })).status, 204)
  const parkedAgain = sleep(5000).then(() => 'parked')
  const afterNetwork = await Promise.race([h.request('GET', `/device/${device}/command/${inNetwork}/poll`), parkedAgain])
  t.equal(typeof afterNetwork === 'string' ? afterNetwork : afterNetwork.status, 204, 'a network deleted with its devices: 204 at once')
})

t.test('R7: a command past its lifetime is not handed to pollers; queries still list it', async (t) => {
  let now = Date.UTC(2024, 0, 1)
  const h = await createTestApp(t, { clock: { now: () => now } })
  const device = await addDevice(h)
  const short = (await h.request('POST', `/device/${device}/command`, { body: { command: 'short', lifetime: 5 } })).body.id
  const forever = (await h.request('POST', `/device/${device}/command`, { body: { command: 'forever' } })).body.id
  const updated = (await h.request('POST', `/device/${device}/command`, { body: { command: 'updated', lifetime: 5 } })).body.id
  await h.request('PUT', `/device/${device}/command/${updated}`, { body: { status: 'Done' } })
  const from = String(Date.UTC(2023, 0, 1))
  t.same((await h.request('GET', `/device/${device}/command/poll`, { query: { timestamp: from } })).body.map((c: { id: number }) => c.id), [short, forever, updated])
  now += 6000
  t.same((await h.request('GET', `/device/${device}/command/poll`, { query: { timestamp: from } })).body.map((c: { id: number }) => c.id), [forever, updated])
  t.equal((await h.request('GET', `/device/${device}/command`)).body.length, 3, 'queries list it')
  t.equal((await h.request('GET', `/device/${device}/command/${short}`)).status, 200)

  // The lifetime counts from the server's time (issue #23): a client timestamp 10 s old does not expire it at birth.
  const live = await parked(h, () => h.request('GET', `/device/${device}/command/poll`, { query: { waitTimeout: 1 } }))
  const stale = (await h.request('POST', `/device/${device}/command`, { body: { command: 'stale', lifetime: 1, timestamp: String(now - 10_000) } })).body.id
  t.same((await live.result).body.map((c: { id: number }) => c.id), [stale], 'an old client timestamp does not expire a command at birth')
  now += 2000
  t.same((await h.request('GET', `/device/${device}/command/poll`, { query: { timestamp: from, waitTimeout: 0 } })).body.map((c: { id: number }) => c.id),
    [forever, updated], 'it expires a lifetime after the server stamped it')
})

t.test('R3: $device-add / $device-update only reach polls that name them', async (t) => {
  const h = await createTestApp(t)
  const device = await addDevice(h)
  const system = (notification: string) => h.hub.log.append({ kind: 'notification', input: { notification, deviceId: device, networkId: 1, deviceTypeId: 1, parameters: null } })
  const add = await system('$device-add')
  const from = String(Date.UTC(2000, 0, 1))
  t.same((await h.request('GET', '/device/notification/poll', { query: { timestamp: from, waitTimeout: 0 } })).body, [])
  const named = await h.request('GET', `/device/${device}/notification/poll`, { query: { timestamp: from, names: '$device-add', waitTimeout: 0 } })
  t.same(named.body.map((n: { id: number }) => n.id), [add.id])

  const unnamed = await parked(h, () => h.request('GET', '/device/notification/poll', { query: { waitTimeout: 1 } }))
  const listed = await parked(h, () => h.request('GET', '/device/notification/poll', { query: { names: '$device-update' } }))
  const update = await system('$device-update')
  t.same((await listed.result).body.map((n: { id: number }) => n.id), [update.id])
  t.same((await unnamed.result).body, [])
})

t.test('R9: concurrent writers, many items per millisecond, re-polling clients get each item exactly once', async (t) => {
  const h = await createTestApp(t)
  const base = await listen(t, h)
  const devices = [await addDevice(h), await addDevice(h)]
  const token = h.adminToken
  const writers = 8
  const perWriter = 40
  const expected = writers * perWriter
  const start = (await call(`${base}/info`, token)).body.serverTimestamp as string

  const consume = async (url: (cursor: string) => string): Promise<number[]> => {
    const seen: number[] = []
    let cursor = start
    while (seen.length < expected) {
      const res = await call(url(cursor), token)
      if (res.status !== 200) throw new Error(`poll answered ${res.status}`)
      for (const item of res.body) seen.push(item.id)
      if (res.body.length > 0) cursor = res.body[res.body.length - 1].timestamp
    }
    await sleep(50)
    const tail = await call(url(cursor), token)
    for (const item of tail.body) seen.push(item.id)
    return seen
  }
  const many = consume((cursor) => `${base}/device/notification/poll?timestamp=${cursor}&waitTimeout=5`)
  const single = consume((cursor) => `${base}/device/notification/poll?deviceIds=${devices.join(',')}&timestamp=${cursor}&waitTimeout=5`)
  const commands = (async () => {
    const seen: number[] = []
    let cursor = start
    while (seen.length < expected) {
      const res = await call(`${base}/device/command/poll?timestamp=${cursor}&limit=7&waitTimeout=5`, token)
      for (const item of res.body) seen.push(item.id)
      if (res.body.length > 0) cursor = res.body[res.body.length - 1].timestamp
    }
    return seen
  })()

  const inserted: number[] = []
  const commandIds: number[] = []
  await Promise.all(Array.from({ length: writers }, async (_, w) => {
    for (let i = 0; i < perWriter; i++) {
      const device = devices[(w + i) % 2]
      const [n, c] = await Promise.all([
        call(`${base}/device/${device}/notification`, token, { method: 'POST', body: { notification: 'tick', parameters: { w, i } } }),
        call(`${base}/device/${device}/command`, token, { method: 'POST', body: { command: 'go' } })
      ])
      inserted.push(n.body.id)
      commandIds.push(c.body.id)
    }
  }))
  const sorted = (xs: number[]): number[] => [...xs].sort((a, b) => a - b)
  const [seenMany, seenSingle, seenCommands] = await Promise.all([many, single, commands])
  t.same(sorted(seenMany), sorted(inserted), 'every notification exactly once')
  t.same(sorted(seenSingle), sorted(inserted), 'every notification exactly once (deviceIds)')
  t.same(sorted(seenCommands), sorted(commandIds), 'every command exactly once')
  const stamps = (await h.request('GET', `/device/${devices[0]}/notification`, { query: { take: 1000 } })).body.map((n: { timestamp: string }) => n.timestamp)
  t.equal(new Set(stamps).size, stamps.length, 'server timestamps never tie')
})

t.test('client disconnects release their waiters: no listener or timer leaks', async (t) => {
  const h = await createTestApp(t)
  const base = await listen(t, h)
  const device = await addDevice(h)
  const controllers = Array.from({ length: 200 }, () => new AbortController())
  const polls = controllers.map((c, i) => call(`${base}/device/${i % 2 === 0 ? device + '/' : ''}notification/poll?waitTimeout=60`, h.adminToken, { signal: c.signal }).catch(() => 'aborted'))
  await eventually(() => doorbellOf(h).size === 200, 5000)
  for (const c of controllers) c.abort()
  t.same(new Set(await Promise.all(polls)), new Set(['aborted']))
  await eventually(() => doorbellOf(h).size === 0, 5000)
  t.equal(doorbellOf(h).size, 0, 'every waiter unsubscribed')
  t.equal(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length < 20, true, 'their timers are cleared')
})

t.test('shutdown: pending polls answer [] before the server closes', async (t) => {
  const h = await createTestApp(t)
  const base = await listen(t, h)
  const device = await addDevice(h)
  const polls = [
    call(`${base}/device/${device}/notification/poll?waitTimeout=60`, h.adminToken),
    call(`${base}/device/command/poll?waitTimeout=60&names=never-sent`, h.adminToken)
  ]
  // Both polls must be parked before the command exists, or the command poll could take it.
  // Parked = registered and done opening (a stream still opening is not released by the close).
  await eventually(() => h.hub.stats.parkedPolls === 2)
  const command = (await h.request('POST', `/device/${device}/command`, { body: { command: 'c' } })).body.id
  polls.push(call(`${base}/device/${device}/command/${command}/poll?waitTimeout=60`, h.adminToken))
  await eventually(() => h.hub.stats.parkedPolls === 3)
  const started = Date.now()
  await h.app.close()
  const results = await Promise.all(polls)
  t.same(results.map((r) => r.status), [200, 200, 204])
  t.same(results.slice(0, 2).map((r) => r.body), [[], []])
  t.ok(Date.now() - started < 2000, 'close did not wait for the poll timeouts')
  t.equal(doorbellOf(h).size, 0)
})
