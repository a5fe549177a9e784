/**
 * Telemetry as pictures, in real headless Chromium against a fresh server: charts of a device's
 * numeric parameters drawn from stored history (seeded through the store, because the server
 * stamps notifications it receives with its own time), extended live, filtered by name and
 * range; the summary page's presence counts and notification rate; "last seen" texts that
 * tick while the page is open. Screenshots go to test-artifacts/console/.
 */
import t from 'tap'
import type { Page } from 'playwright-core'
import { startServer } from '../../lib/start-server.js'
import type { RunningServer } from '../../lib/start-server.js'
import {
  buildConsole, chromiumMissing, consoleDatabase, eventually, launchChromium, rest, shot, signIn, watchCsp
} from '../fixtures/console-browser.js'

const PASSWORD = 'telemetry-admin-password'
const DEVICE = 'weather-station'
const MINUTE = 60_000
const HOUR = 60 * MINUTE

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

interface Seeded { deviceId: string, name: string, at: number, parameters: Record<string, unknown> }

/**
 * Devices and their stored notifications at chosen times, written through the store before
 * anything else: the message clock only moves forward (every stamp after the last one), so the
 * devices are inserted without a `$device-add` and the rows go in oldest first.
 */
async function seed (server: RunningServer, token: string, devices: Array<{ id: string, networkId?: number }>, rows: Seeded[]): Promise<void> {
  const deviceTypeId = ((await rest(server, token, 'GET', '/devicetype')).body as Array<{ id: number }>)[0]!.id
  const defaultNetwork = ((await rest(server, token, 'GET', '/network')).body as Array<{ id: number }>)[0]!.id
  const networkOf = new Map<string, number>()
  for (const d of devices) {
    networkOf.set(d.id, d.networkId ?? defaultNetwork)
    await server.hub.store.devices.insert({ id: d.id, name: d.id, data: null, networkId: d.networkId ?? defaultNetwork, deviceTypeId, isBlocked: false })
  }
  for (const row of [...rows].sort((a, b) => a.at - b.at)) {
    const stored = await server.hub.store.notifications.insert({
      notification: row.name, deviceId: row.deviceId, networkId: networkOf.get(row.deviceId)!, deviceTypeId, parameters: row.parameters as never
    }, row.at)
    if (stored.timestamp !== row.at) throw new Error(`seeded at ${stored.timestamp}, not ${row.at}: seed before any other message`)
  }
}

async function start (t: Tap): Promise<{ server: RunningServer, page: Page, admin: string, errors: string[], csp: string[] }> {
  buildConsole()
  const server = await startServer({ port: 0, admin: { password: PASSWORD }, db: await consoleDatabase(t) })
  t.teardown(() => server.close())
  const browser = await launchChromium()
  t.teardown(() => browser.close())
  const admin = (await server.adminTokens()).accessToken
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  page.setDefaultTimeout(15_000)
  const errors: string[] = []
  page.on('pageerror', (error) => errors.push(error.message))
  const csp = await watchCsp(page)
  return { server, page, admin, errors, csp }
}

/** What the chart of `path` drew (written by the chart after each draw). */
async function drawn (page: Page, path: string): Promise<{ series: number, points: number, xMin: number, xMax: number }> {
  const chart = page.locator(`.chart-card[data-path="${path}"] .chart`)
  const read = async (name: string): Promise<number> => Number(await chart.getAttribute(`data-${name}`))
  return { series: await read('series'), points: await read('points'), xMin: await read('x-min'), xMax: await read('x-max') }
}

async function waitForPoints (page: Page, path: string, points: number): Promise<void> {
  await page.locator(`.chart-card[data-path="${path}"] .chart[data-points="${points}"]`).waitFor()
}

async function chartPaths (page: Page): Promise<string[]> {
  return await page.locator('.chart-card').evaluateAll((cards) => cards.map((c) => (c as unknown as { dataset: { path: string } }).dataset.path))
}

if (chromiumMissing() !== undefined) {
  t.fail(chromiumMissing()!)
} else {
  t.test('device telemetry: charts from history, live, by name and range', async (t) => {
    const { server, page, admin, errors, csp } = await start(t)
    const now = Date.now()
    const rows: Seeded[] = []
    // `env` every 30 min over the last day (2 in the last hour), `power` every hour (1 in the last hour), one `env` 3 days ago.
    for (let i = 0; i < 48; i++) {
      rows.push({ deviceId: DEVICE, name: 'env', at: now - (i * 30 + 10) * MINUTE, parameters: { env: { temperature: 18 + 4 * Math.sin(i / 4), humidity: 55 + i % 7 }, unit: 'C' } })
    }
    for (let j = 0; j < 24; j++) rows.push({ deviceId: DEVICE, name: 'power', at: now - (j * 60 + 25) * MINUTE, parameters: { battery: 100 - j, load: { watts: 3 + j % 5 }, ok: true } })
    rows.push({ deviceId: DEVICE, name: 'env', at: now - 72 * HOUR, parameters: { env: { temperature: 12, humidity: 80 } } })
    await seed(server, admin, [{ id: DEVICE }], rows)
    t.equal((await rest(server, admin, 'PUT', `/device/${DEVICE}`, { name: 'Weather station' })).status, 204)

    await signIn(page, server.consoleUrl!, 'dhadmin', PASSWORD)
    await page.getByRole('heading', { name: 'Devices' }).waitFor()
    await page.goto(`${server.consoleUrl!}#/device/${DEVICE}`)
    await page.getByRole('heading', { name: 'Telemetry' }).waitFor()
    await page.locator('.telemetry .badge-live').waitFor()
    await waitForPoints(page, 'env.temperature', 2)

    // Last hour (the default): one chart per numeric path; strings and booleans are not charted.
    t.same(await chartPaths(page), ['battery', 'env.humidity', 'env.temperature', 'load.watts'], 'one chart per numeric leaf, nested ones by path')
    const hour = await drawn(page, 'env.temperature')
    t.equal(hour.series, 1, 'one series: the one notification name carrying it')
    t.equal(hour.points, 2, 'the two env notifications of the last hour')
    t.equal((await drawn(page, 'battery')).points, 1, 'the one power notification of the last hour')
    t.ok(Math.abs(hour.xMax - now / 1000) < 30 && Math.abs(hour.xMax - hour.xMin - 3600) < 1, `the x axis spans the last hour (${hour.xMin}..${hour.xMax})`)
    t.match(await page.locator('.telemetry-summary').textContent(), /^3 notifications last hour, 4 numeric parameters\.$/)
    t.equal(await page.locator('.chart-card[data-path="env.temperature"] .u-legend .u-series').count(), 2, 'a legend: time and the series')
    t.match(await page.locator('.chart-card[data-path="env.temperature"] .u-legend').textContent(), /env/, 'the legend names the notification')
    const position = await page.evaluate("getComputedStyle(document.querySelector('.u-over')).position")
    t.equal(position, 'absolute', "uPlot's stylesheet is applied")
    // The raw list loads its own history, apart from the charts'.
    await page.locator('.feed-item').first().waitFor()
    t.ok(await page.locator('.feed-item').first().isVisible(), 'the raw notification list is still on the page')

    // Last day: the whole day of history.
    await page.getByRole('button', { name: 'Last day' }).click()
    await waitForPoints(page, 'env.temperature', 48)
    const day = await drawn(page, 'env.temperature')
    t.ok(Math.abs(day.xMax - day.xMin - 86_400) < 1, 'the x axis spans the last day')
    await waitForPoints(page, 'battery', 24)
    t.equal((await drawn(page, 'battery')).points, 24)
    t.equal(await page.getByRole('button', { name: 'Last day' }).getAttribute('aria-pressed'), 'true', 'the chosen range is marked')

    // Live: new notifications extend the charts without a reload.
    const history = page.waitForRequest((r) => r.url().includes('/notification?'), { timeout: 3000 }).then(() => true, () => false)
    const posted = await rest(server, admin, 'POST', `/device/${DEVICE}/notification`, { notification: 'env', parameters: { env: { temperature: 31.5, humidity: 40 } } })
    t.equal(posted.status, 201)
    await waitForPoints(page, 'env.temperature', 49)
    await rest(server, admin, 'POST', `/device/${DEVICE}/notification`, { notification: 'power', parameters: { battery: 99.5, load: { watts: 4 }, env: { temperature: 25 } } })
    await waitForPoints(page, 'env.temperature', 50)
    t.equal((await drawn(page, 'env.temperature')).series, 2, 'a second name carrying env.temperature adds a series')
    await waitForPoints(page, 'battery', 25)
    t.equal((await drawn(page, 'battery')).points, 25)
    t.notOk(await history, 'live points came from the feed, not from reloading history')
    const postedAt = new Date(`${posted.body.timestamp as string}Z`).getTime() / 1000
    t.ok((await drawn(page, 'env.temperature')).xMax >= postedAt, 'the x axis reaches the newest notification')
    await page.waitForTimeout(300)
    await shot(page, '11-telemetry-day')

    // Filter by name: only power's parameters (its env.temperature too), history asked for power alone.
    const filtered = page.waitForRequest((r) => r.url().includes('/notification?') && r.url().includes('notification=power'))
    await page.getByLabel('Notification', { exact: true }).selectOption('power')
    await filtered
    await page.locator('.chart-card[data-path="env.humidity"]').waitFor({ state: 'detached' })
    t.same(await chartPaths(page), ['battery', 'env.temperature', 'load.watts'], 'only the parameters power carries')
    await waitForPoints(page, 'battery', 25)
    t.equal((await drawn(page, 'env.temperature')).points, 1, "env.temperature: power's one value")
    await page.getByLabel('Notification', { exact: true }).selectOption('env')
    await waitForPoints(page, 'env.temperature', 49)
    t.same(await chartPaths(page), ['env.humidity', 'env.temperature'])
    await page.getByLabel('Notification', { exact: true }).selectOption('')
    await waitForPoints(page, 'env.temperature', 50)

    // Last week: the old one too. Custom: a range of the past, only the old one.
    await page.getByRole('button', { name: 'Last week' }).click()
    await waitForPoints(page, 'env.temperature', 51)
    const week = await drawn(page, 'env.temperature')
    t.ok(Math.abs(week.xMax - week.xMin - 7 * 86_400) < 1, 'the x axis spans the last week')
    await page.getByRole('button', { name: 'Custom' }).click()
    const local = (ms: number): string => new Date(ms - new Date(ms).getTimezoneOffset() * MINUTE).toISOString().slice(0, 16)
    await page.getByLabel('From', { exact: true }).fill(local(now - 80 * HOUR))
    await page.getByLabel('To', { exact: true }).fill(local(now - 48 * HOUR))
    const custom = page.waitForRequest((r) => r.url().includes('/notification?') && r.url().includes('end='))
    await page.getByRole('button', { name: 'Show' }).click()
    t.match(new URL((await custom).url()).searchParams.get('start'), /^\d{4}-\d\d-\d\dT/, 'the custom range is asked of the API')
    await waitForPoints(page, 'env.temperature', 1)
    t.same(await chartPaths(page), ['env.humidity', 'env.temperature'], 'only what was stored in that range')
    await shot(page, '13-telemetry-custom')
    await page.getByLabel('To', { exact: true }).fill(local(now - 90 * HOUR))
    await page.getByRole('button', { name: 'Show' }).click()
    t.match(await page.getByRole('alert').filter({ hasText: 'before' }).textContent(), /"From" must be before "To"/, 'a reversed range is refused')
    await page.getByRole('button', { name: 'Last day' }).click()
    await waitForPoints(page, 'env.temperature', 50)

    t.same(csp, [], 'no Content-Security-Policy violation (charts and their styles are served files)')
    t.same(errors, [], 'no uncaught errors in the page')
  })

  t.test('more history than the charts load: the latest ones, said so', async (t) => {
    const { server, page, admin, errors } = await start(t)
    await seed(server, admin, [{ id: 'busy' }], [])
    const now = Date.now()
    const device = (await rest(server, admin, 'GET', '/device/busy')).body as { networkId: number, deviceTypeId: number }
    const rows = Array.from({ length: 10_050 }, (_, i) => ({ notification: 'tick', deviceId: 'busy', networkId: device.networkId, deviceTypeId: device.deviceTypeId, parameters: { n: i } }))
    // 10 050 notifications over the last 50 minutes, 50 per statement.
    for (let i = 0; i < rows.length; i += 50) await server.hub.store.notifications.insertMany(rows.slice(i, i + 50), now - 50 * MINUTE + i * 290)
    await signIn(page, server.consoleUrl!, 'dhadmin', PASSWORD)
    await page.getByRole('heading', { name: 'Devices' }).waitFor()
    await page.goto(`${server.consoleUrl!}#/device/busy`)
    await waitForPoints(page, 'n', 10_000)
    t.match(await page.locator('.telemetry-summary').textContent(), /^Showing the latest 10,000 notifications of this range \(older ones are not drawn\)/)
    t.same(errors, [])
  })

  t.test('"last seen" ticks while the page is open', async (t) => {
    const { server, page, admin } = await start(t)
    t.equal((await rest(server, admin, 'PUT', `/device/${DEVICE}`, { name: 'Weather station' })).status, 204)
    t.equal((await rest(server, admin, 'POST', `/device/${DEVICE}/notification`, { notification: 'hello' })).status, 201)
    await signIn(page, server.consoleUrl!, 'dhadmin', PASSWORD)
    await page.getByRole('heading', { name: 'Devices' }).waitFor()
    const cell = page.getByRole('row', { name: /Weather station/ }).locator('time')
    await cell.waitFor()
    const listed = await cell.textContent()
    // From here the pages load nothing new: any change of the text is the clock's.
    await page.route('**/device?*', () => undefined)
    await page.route(`**/device/${DEVICE}`, () => undefined)
    await page.waitForFunction(([before]) => {
      const text = (globalThis as unknown as { document: { querySelector(s: string): { textContent: string } | null } }).document.querySelector('tbody time')?.textContent
      return text !== undefined && text !== before
    }, [listed], { timeout: 12_000 })
    t.match(await cell.textContent(), /^\d+ s ago$/, `the list's "last seen" moved on from "${listed ?? ''}"`)

    await page.unroute(`**/device/${DEVICE}`)
    await page.goto(`${server.consoleUrl!}#/device/${DEVICE}`)
    const seen = page.locator('dt:text-is("Last seen") + dd time')
    await seen.waitFor()
    const before = await seen.textContent()
    await page.route(`**/device/${DEVICE}`, () => undefined)
    // The clock ticks every 5 s: wait for the next tick (up to 12 s) rather than a fixed time.
    const after = await eventually(() => seen.textContent(), (text) => text !== before, 12_000)
    t.not(after, before, `the device page's "last seen" moved on: "${before ?? ''}" -> "${after ?? ''}"`)
    t.match(after, /^\d+ s ago$/)
  })

  t.test('the summary page: presence counts and notifications per minute', async (t) => {
    const { server, page, admin, errors, csp } = await start(t)
    const lab = (await rest(server, admin, 'POST', '/network', { name: 'Lab' })).body.id as number
    const farm = (await rest(server, admin, 'POST', '/network', { name: 'Farm' })).body.id as number
    const now = Date.now()
    // Stored earlier (3 and 5 minutes ago), then two devices post now and are online.
    const m = (deviceId: string, at: number): Seeded => ({ deviceId, name: 'm', at, parameters: {} })
    await seed(server, admin, [{ id: 'lab-1', networkId: lab }, { id: 'lab-2', networkId: lab }, { id: 'farm-1', networkId: farm }],
      [m('lab-1', now - 5 * MINUTE), m('lab-1', now - 5 * MINUTE + 1), m('lab-1', now - 3 * MINUTE), m('farm-1', now - 3 * MINUTE + 2), m('farm-1', now - 3 * MINUTE + 3)])
    await rest(server, admin, 'POST', '/device/lab-1/notification', { notification: 'm' })
    await rest(server, admin, 'POST', '/device/farm-1/notification', { notification: 'm' })

    await signIn(page, server.consoleUrl!, 'dhadmin', PASSWORD)
    await page.getByRole('heading', { name: 'Devices' }).waitFor()
    await page.getByRole('link', { name: 'Summary' }).click()
    await page.getByRole('heading', { name: 'Summary: All networks' }).waitFor()
    const stat = (id: string) => page.locator(`[data-stat="${id}"] .stat-value`)
    const total = async (): Promise<number> => (await page.locator('table.per-minute tbody td:nth-child(2)').allTextContents()).reduce((a, b) => a + Number(b), 0)
    const count = async (query: string): Promise<string> => String((await rest(server, admin, 'GET', `/device/count?${query}`)).body.count as number)
    await page.locator('[data-stat="devices"] .stat-value:not(:text-is("…"))').waitFor()
    t.equal(await stat('devices').textContent(), await count(''), 'devices: as /device/count')
    t.equal(await stat('online').textContent(), await count('online=true'), 'online: as /device/count?online=true')
    t.equal(await stat('offline').textContent(), await count('online=false'), 'offline: the others')
    t.equal(await stat('online').textContent(), '2')
    await page.locator('.panel .badge.live').waitFor()
    // The stream's backlog arrives after the stream opened: wait for it to settle.
    const settled = async (expected: number): Promise<number> => await eventually(total, (n) => n === expected, 15_000)
    t.equal(await settled(7), 7, 'the last 10 minutes: 5 stored, 2 posted')
    t.equal(await stat('last-minute').textContent(), '2', 'the last minute: the 2 posted')
    // The chart writes what it drew after the draw, an effect after the render.
    await page.locator('.chart[data-points="10"]').waitFor()
    t.equal(await page.locator('.chart[data-points="10"]').count(), 1, 'a bar per minute')
    for (let i = 0; i < 3; i++) await rest(server, admin, 'POST', '/device/lab-2/notification', { notification: 'm' })
    await page.locator('[data-stat="last-minute"] .stat-value:text-is("5")').waitFor()
    t.equal(await settled(10), 10, 'live: 3 more')
    await page.locator('[data-stat="online"] .stat-value:text-is("3")').waitFor({ timeout: 15_000 })
    t.pass('lab-2 came online (the counts refresh every 10 s)')
    // The per-network table reloads apart from the counts above it: wait for its own answer.
    const labRow = page.getByRole('row').filter({ hasText: 'Lab' }).locator('td')
    const perNetwork = await eventually(() => labRow.allTextContents(), (cells) => cells.join() === 'Lab,2,2,0', 15_000)
    t.same(perNetwork, ['Lab', '2', '2', '0'], 'per network')
    await shot(page, '12-summary')

    // Farm's counts held back: under Farm's title, the counts of all networks must not show meanwhile.
    let releaseFarm = (): void => {}
    const farmHeld = new Promise<void>((resolve) => { releaseFarm = resolve })
    const farmCount = (url: URL): boolean => url.pathname.endsWith('/device/count') && url.searchParams.get('networkId') === String(farm)
    await page.route(farmCount, async (route) => { await farmHeld; await route.continue() })
    await page.getByLabel('Network', { exact: true }).selectOption(String(farm))
    await page.getByRole('heading', { name: 'Summary: Farm' }).waitFor()
    t.same(await Promise.all(['devices', 'online', 'offline'].map(async (id) => await stat(id).textContent())), ['…', '…', '…'],
      "while Farm's counts load: not the other page's")
    releaseFarm() // the route stays, passing requests on
    await page.locator('[data-stat="devices"] .stat-value:text-is("1")').waitFor()
    t.equal(await stat('online').textContent(), await count(`networkId=${farm}&online=true`), 'one network: its counts')
    await page.locator('.panel .badge.live').waitFor()
    t.equal(await settled(3), 3, "one network: only its devices' notifications")
    await shot(page, '14-summary-network')
    t.same(csp, [])
    t.same(errors, [])
  })
}
