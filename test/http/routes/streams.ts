/** Server-Sent Events: live delivery, backlog paging, Last-Event-ID resume, errors, release on close. */
import t from 'tap'
import { Action } from '../../../lib/core/auth/actions.js'
import { createTestApp } from '../../fixtures/app.js'
import { addDevice, call, eventually, listen, tokenWithActions } from '../../fixtures/messaging.js'

interface SseEvent { id: string, data: any } // eslint-disable-line @typescript-eslint/no-explicit-any

/** Opens an event stream with fetch and collects its events. */
async function openStream (url: string, token: string | null, headers: Record<string, string> = {}): Promise<{
  status: number
  contentType: string | null
  events: SseEvent[]
  body: string
  close(): void
}> {
  const controller = new AbortController()
  const res = await fetch(url, {
    headers: { ...headers, ...(token === null ? {} : { authorization: `Bearer ${token}` }) },
    signal: controller.signal
  })
  const events: SseEvent[] = []
  const state = { body: '' }
  if (res.headers.get('content-type')?.startsWith('text/event-stream') === true) {
    void (async () => {
      const decoder = new TextDecoder()
      let buffer = ''
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          buffer += decoder.decode(chunk, { stream: true })
          let end: number
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end)
            buffer = buffer.slice(end + 2)
            const id = /^id: (.*)$/m.exec(block)?.[1]
            const data = /^data: (.*)$/m.exec(block)?.[1]
            if (id !== undefined && data !== undefined) events.push({ id, data: JSON.parse(data) })
          }
        }
      } catch {
        // aborted
      }
    })()
  } else {
    state.body = await res.text()
  }
  return { status: res.status, contentType: res.headers.get('content-type'), events, body: state.body, close: () => controller.abort() }
}

t.test('notification stream: live events in order, resume with Last-Event-ID loses and repeats nothing', async (t) => {
  const h = await createTestApp(t)
  const base = await listen(t, h)
  const device = await addDevice(h)
  const doorbell = h.hub.router
  const before = doorbell.size
  const post = (name: string): Promise<unknown> => call(`${base}/device/${device}/notification`, h.adminToken, { method: 'POST', body: { notification: name } })

  const first = await openStream(`${base}/device/${device}/notification/stream`, h.adminToken)
  t.equal(first.status, 200)
  t.match(first.contentType, /^text\/event-stream/)
  await eventually(() => doorbell.size === before + 1)
  for (let i = 0; i < 5; i++) await post(`n${i}`)
  await eventually(() => first.events.length === 5)
  t.same(first.events.map((e) => e.data.notification), ['n0', 'n1', 'n2', 'n3', 'n4'])
  t.match(first.events[0]!.data, { id: Number, notification: 'n0', deviceId: device, networkId: 1, deviceTypeId: 1, timestamp: String, parameters: null })
  const lastId = first.events[2]!.id
  first.close()
  await eventually(() => doorbell.size === before)

  // Missed while away: n5..n7, written concurrently.
  await Promise.all([post('n5'), post('n6'), post('n7')])
  const resumed = await openStream(`${base}/device/${device}/notification/stream`, h.adminToken, { 'last-event-id': lastId })
  await eventually(() => resumed.events.length === 5)
  await post('n8')
  await eventually(() => resumed.events.length === 6)
  const names = resumed.events.map((e) => e.data.notification)
  t.same(names.slice(0, 2), ['n3', 'n4'])
  t.same(new Set(names.slice(2, 5)), new Set(['n5', 'n6', 'n7']))
  t.equal(names[5], 'n8')
  const ids = resumed.events.map((e) => Number(e.id))
  t.same(ids, [...ids].sort((a, b) => a - b), 'cursors increase')
  resumed.close()
  await eventually(() => doorbell.size === before)
})

t.test('a resumed stream pages through a backlog larger than one page', async (t) => {
  const h = await createTestApp(t)
  const base = await listen(t, h)
  const device = await addDevice(h)
  for (let i = 0; i < 250; i++) await call(`${base}/device/${device}/notification`, h.adminToken, { method: 'POST', body: { notification: `b${i}` } })
  const stream = await openStream(`${base}/device/notification/stream?deviceIds=${device}&timestamp=0`, h.adminToken)
  await eventually(() => stream.events.length === 250)
  t.same(stream.events.map((e) => e.data.notification), Array.from({ length: 250 }, (_, i) => `b${i}`))
  stream.close()
})

t.test('client-given timestamps do not move the cursor: a resume after any event id loses and repeats nothing', async (t) => {
  const h = await createTestApp(t)
  const base = await listen(t, h)
  const device = await addDevice(h)
  // Out of order on purpose: the future, the past, none.
  const given = ['2100-01-01T00:00:00.000', '1999-01-01T00:00:00.000', undefined, '2050-06-01T00:00:00.000', undefined]
  for (const [i, timestamp] of given.entries()) {
    await call(`${base}/device/${device}/notification`, h.adminToken, { method: 'POST', body: { notification: `c${i}`, ...(timestamp === undefined ? {} : { timestamp }) } })
  }
  const all = await openStream(`${base}/device/notification/stream?deviceIds=${device}&timestamp=0`, h.adminToken)
  await eventually(() => all.events.length === given.length)
  all.close()
  t.same(all.events.map((e) => e.data.notification), ['c0', 'c1', 'c2', 'c3', 'c4'], 'in commit order')
  const ids = all.events.map((e) => Number(e.id))
  t.same([...ids].sort((a, b) => a - b), ids, 'event ids grow in commit order')
  for (let k = 0; k < ids.length; k++) {
    const resumed = await openStream(`${base}/device/notification/stream?deviceIds=${device}`, h.adminToken, { 'last-event-id': String(ids[k]) })
    const want = all.events.slice(k + 1).map((e) => e.data.notification)
    await eventually(() => resumed.events.length >= want.length)
    await new Promise((resolve) => setTimeout(resolve, 50))
    resumed.close()
    t.same(resumed.events.map((e) => e.data.notification), want, `resume after event ${k}`)
  }
})

t.test('command streams: inserts, updates with returnUpdatedCommands, names filter, many devices', async (t) => {
  const h = await createTestApp(t)
  const base = await listen(t, h)
  const a = await addDevice(h)
  const b = await addDevice(h)
  const inserts = await openStream(`${base}/device/command/stream?deviceIds=${a},${b}&names=go`, h.adminToken)
  const updates = await openStream(`${base}/device/${a}/command/stream?returnUpdatedCommands=true`, h.adminToken)
  await eventually(() => h.hub.router.size >= 2)
  const c1 = await call(`${base}/device/${a}/command`, h.adminToken, { method: 'POST', body: { command: 'go' } })
  await call(`${base}/device/${b}/command`, h.adminToken, { method: 'POST', body: { command: 'skip' } })
  await call(`${base}/device/${b}/command`, h.adminToken, { method: 'POST', body: { command: 'go' } })
  await eventually(() => inserts.events.length === 2)
  t.same(inserts.events.map((e) => [e.data.deviceId, e.data.command]), [[a, 'go'], [b, 'go']])
  await call(`${base}/device/${a}/command/${c1.body.id}`, h.adminToken, { method: 'PUT', body: { status: 'done', result: { ok: true } } })
  await eventually(() => updates.events.length === 1)
  t.match(updates.events[0]!.data, { id: c1.body.id, status: 'done', result: { ok: true } })
  t.equal(updates.events[0]!.id, String(Date.parse(updates.events[0]!.data.lastUpdated + 'Z')), 'an update\'s cursor is its lastUpdated')
  inserts.close()
  updates.close()
})

t.test('stream errors answer JSON before any event: 401, 403, 404, 400', async (t) => {
  const h = await createTestApp(t)
  const base = await listen(t, h)
  const device = await addDevice(h)
  const anonymous = await openStream(`${base}/device/${device}/notification/stream`, null)
  t.same([anonymous.status, JSON.parse(anonymous.body)], [401, { error: 401, message: 'Unauthorized' }])
  const noAction = await openStream(`${base}/device/command/stream`, tokenWithActions(h, [Action.GetDeviceNotification]))
  t.same([noAction.status, JSON.parse(noAction.body).message], [403, 'Access is denied'])
  const missing = await openStream(`${base}/device/nope/notification/stream`, h.adminToken)
  t.equal(missing.status, 404)
  const badCursor = await openStream(`${base}/device/${device}/notification/stream`, h.adminToken, { 'last-event-id': 'yesterday' })
  t.same([badCursor.status, JSON.parse(badCursor.body).message], [400, 'Unparseable timestamp'])
  const badTimestamp = await openStream(`${base}/device/${device}/command/stream?timestamp=zzz`, h.adminToken)
  t.equal(badTimestamp.status, 400)
  const badIds = await openStream(`${base}/device/notification/stream?networkIds=1,x`, h.adminToken)
  t.equal(badIds.status, 400)
  const badBool = await openStream(`${base}/device/command/stream?returnUpdatedCommands=maybe`, h.adminToken)
  t.equal(badBool.status, 400)
  const unknownNetwork = await openStream(`${base}/device/notification/stream?networkIds=999`, h.adminToken)
  t.equal(unknownNetwork.status, 404)
  const client = await h.createUser({ networkIds: [] })
  const noScope = await openStream(`${base}/device/notification/stream`, client.accessToken)
  t.same([noScope.status, JSON.parse(noScope.body).message], [403, 'No access to any device type or network'])
  t.equal(h.hub.router.size, 0, 'no listener left by refused streams')
})

t.test('hostile query values and headers never answer 5xx', async (t) => {
  const h = await createTestApp(t)
  const base = await listen(t, h)
  await addDevice(h, 'd1')
  const values = ['', '-1', '1e30', 'abc', '%00', 'a'.repeat(300), '[1]', ',,,', "'; drop table users; --", '1.5']
  const params = ['names', 'timestamp', 'deviceId', 'deviceIds', 'networkIds', 'deviceTypeIds', 'returnUpdatedCommands']
  let count = 0
  for (const path of ['/device/notification/stream', '/device/{id}/notification/stream', '/device/command/stream', '/device/{id}/command/stream']) {
    for (const value of values) {
      const url = `${base}${path.replace('{id}', encodeURIComponent(value))}?${params.map((p) => `${p}=${encodeURIComponent(value)}`).join('&')}`
      for (const headers of [{}, { 'last-event-id': value }] as Array<Record<string, string>>) {
        const stream = await openStream(url, h.adminToken, headers)
        count++
        t.ok(stream.status < 500, `${path} ${value.slice(0, 20)}: ${stream.status}`)
        stream.close()
      }
    }
  }
  t.equal(count, 80)
  await eventually(() => h.hub.router.size === 0)
})

t.test('the OpenAPI document describes the event streams', async (t) => {
  const h = await createTestApp(t)
  const doc = (await h.request('GET', '/openapi.json')).body
  for (const path of ['/device/notification/stream', '/device/{deviceId}/notification/stream', '/device/command/stream', '/device/{deviceId}/command/stream']) {
    t.ok(doc.paths[path]?.get?.responses?.['200']?.content?.['text/event-stream'], path)
  }
})

t.test('closing the server ends open streams', async (t) => {
  const h = await createTestApp(t)
  const base = await listen(t, h)
  const device = await addDevice(h)
  const stream = await openStream(`${base}/device/${device}/notification/stream`, h.adminToken)
  t.equal(stream.status, 200)
  await h.app.close()
  t.equal(h.hub.router.size, 0)
})
