/**
 * The web console in real headless Chromium (Debian's `chromium`, driven by playwright-core;
 * no browser is downloaded) against a fresh server, used as a person would. Screenshots of
 * the main pages go to test-artifacts/console/.
 */
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { chromium } from 'playwright-core'
import { startServer } from '../../lib/start-server.js'
import { ROOT } from '../fixtures/cli.js'
import {
  ARGS, CHROMIUM, PASSWORD, consoleDatabase, countWhen, focusWhen, rest, setup, shot, signIn, textWhen
} from '../fixtures/console-browser.js'

const DEVICE = 'console-device'

if (!existsSync(CHROMIUM)) {
  t.fail(`Chromium is missing at ${CHROMIUM}: install Debian's package (apt-get install -y chromium) or set DEVICEHUB_CHROMIUM`)
} else {
  t.test('the console in a real browser', async (t) => {
    const { server, browser, admin, consoleUrl } = await setup(t)
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } })
    const pageErrors: string[] = []
    page.on('pageerror', (error) => pageErrors.push(error.message))
    page.setDefaultTimeout(10_000)

    // A wrong password: the API's own message.
    await signIn(page, consoleUrl, 'dhadmin', 'not-the-password')
    const wrong = await fetch(`${server.url}/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: 'dhadmin', password: 'not-the-password' }) })
    const wrongMessage = ((await wrong.json()) as { message: string }).message
    t.equal(await textWhen(page.locator('.error-message'), wrongMessage), wrongMessage, 'a failed sign-in shows the API message')
    await shot(page, '01-sign-in-error')

    // Sign in.
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('heading', { name: 'Devices' }).waitFor()
    t.ok(await page.getByText('Signed in as').isVisible(), 'signed in')
    t.equal(await page.evaluate('localStorage.length'), 0, 'no token in localStorage (session storage only)')

    // A device registered over REST appears in the list; its notification makes it online.
    t.equal((await rest(server, admin, 'PUT', `/device/${DEVICE}`, { name: 'Hall sensor', data: { floor: 2 } })).status, 204)
    t.equal((await rest(server, admin, 'PUT', '/device/other-device', { name: 'Attic fan' })).status, 204)
    t.equal((await rest(server, admin, 'POST', `/device/${DEVICE}/notification`, { notification: 'boot', parameters: { version: '1.0' } })).status, 201)
    await page.getByRole('button', { name: 'Refresh', exact: true }).click()
    // The first load may have listed the device before its notification (offline): wait for the Refresh's answer.
    t.match(await textWhen(page.getByRole('row', { name: /Hall sensor/ }), /online/), /online/, 'online dot')
    t.match(await textWhen(page.getByRole('row', { name: /Attic fan/ }), /offline.*never/), /offline.*never/, 'never seen: offline')
    await page.getByLabel('Search by name').fill('Attic')
    await page.getByRole('row', { name: /Hall sensor/ }).waitFor({ state: 'detached' })
    t.equal(await countWhen(page.locator('tbody tr'), 1), 1, 'search narrows the list')
    await page.getByLabel('Search by name').fill('')
    await page.getByLabel('Presence').selectOption('true')
    await page.getByRole('row', { name: /Attic fan/ }).waitFor({ state: 'detached' })
    t.equal(await countWhen(page.locator('tbody tr'), 1), 1, 'online filter')
    await page.getByLabel('Presence').selectOption('')
    await page.getByRole('row', { name: /Attic fan/ }).waitFor()
    await shot(page, '02-devices')

    // The device page: a notification posted over REST appears live. The history (held back here)
    // comes after the stream opened: until it is back the feed says it is loading, not that there are none.
    let releaseHistory = (): void => {}
    const historyHeld = new Promise<void>((resolve) => { releaseHistory = resolve })
    const feedHistory = (url: URL): boolean =>
      url.pathname.endsWith(`/device/${DEVICE}/notification`) && url.searchParams.get('take') === '20'
    await page.route(feedHistory, async (route) => { await historyHeld; await route.continue() })
    await page.getByRole('link', { name: 'Hall sensor' }).click()
    await page.getByRole('heading', { name: 'Hall sensor' }).waitFor()
    await page.locator('.badge.live').waitFor()
    const feedPanel = page.getByRole('region', { name: /^Notifications/ })
    const loadingFeed = 'Loading notifications…'
    t.equal(await textWhen(feedPanel.locator('p.muted'), loadingFeed), loadingFeed, 'the feed is loading its history')
    t.equal(await feedPanel.getByText('No notifications yet.').count(), 0, 'and does not claim there are none')
    releaseHistory() // the route stays, passing requests on (unrouting a held one makes Playwright answer it twice)
    await page.locator('.feed-item', { hasText: 'boot' }).waitFor()
    t.ok(await page.locator('.feed-item', { hasText: 'boot' }).isVisible(), 'history in the feed')
    const posted = await rest(server, admin, 'POST', `/device/${DEVICE}/notification`, { notification: 'temperature', parameters: { celsius: 21.5 } })
    await page.locator(`[data-notification-id="${posted.body.id as number}"]`).waitFor()
    t.match(await page.locator('.feed-item').first().textContent(), /temperature.*21\.5/s, 'the new notification is live, newest first')

    // Reconnecting without loss: the connection drops, reconnects fail for a while, notifications are posted meanwhile.
    const resumes: Array<string | undefined> = []
    page.on('request', (request) => {
      if (request.url().includes('/notification/stream')) resumes.push(request.headers()['last-event-id'])
    })
    await page.route('**/notification/stream**', (route) => route.abort())
    server.app.server.closeAllConnections()
    await page.locator('.badge.warn').waitFor()
    t.match(await page.getByRole('status').filter({ hasText: 'reconnecting' }).textContent(), /Connection lost/, 'the outage is shown')
    const during1 = await rest(server, admin, 'POST', `/device/${DEVICE}/notification`, { notification: 'during-1' })
    const during2 = await rest(server, admin, 'POST', `/device/${DEVICE}/notification`, { notification: 'during-2' })
    await page.unroute('**/notification/stream**')
    await page.locator(`[data-notification-id="${during2.body.id as number}"]`).waitFor({ timeout: 20_000 })
    await page.locator('.badge.live').waitFor()
    t.equal(await page.locator(`[data-notification-id="${during1.body.id as number}"]`).count(), 1, 'the first one posted during the outage, once')
    t.equal(await page.locator(`[data-notification-id="${during2.body.id as number}"]`).count(), 1, 'the second one, once')
    t.equal(await page.locator(`[data-notification-id="${posted.body.id as number}"]`).count(), 1, 'the one before the outage, still once')
    t.match(resumes.at(-1), /^\d+$/, 'the reconnect resumes with Last-Event-ID')

    // Send a command: validated, then its result once the simulated device updates it.
    await page.getByLabel('Command name').fill('light-on')
    await page.getByLabel('Parameters (JSON object)').fill('{"level": ')
    await page.getByRole('button', { name: 'Send command' }).click()
    const jsonError = page.locator('#command-parameters-error')
    t.match(await textWhen(jsonError, /not valid JSON/), /not valid JSON/, 'bad JSON refused before sending')
    await page.getByLabel('Parameters (JSON object)').fill('[1, 2]')
    await page.getByRole('button', { name: 'Send command' }).click()
    // The same element held the last error: wait for the new one.
    t.match(await textWhen(jsonError, /must be a JSON object/), /must be a JSON object/)
    t.same((await rest(server, admin, 'GET', `/device/${DEVICE}/command`)).body, [], 'nothing sent')

    const devicePoll = rest(server, admin, 'GET', `/device/${DEVICE}/command/poll?waitTimeout=30`)
    await page.getByLabel('Parameters (JSON object)').fill('{"level": 7}')
    await page.getByRole('button', { name: 'Send command' }).click()
    const received = await devicePoll
    t.match(received.body, [{ command: 'light-on', parameters: { level: 7 } }], 'the device got the command')
    await page.getByText('sent, waiting for the device').waitFor()
    await shot(page, '03-device-waiting')
    const commandId = received.body[0].id as number
    t.equal((await rest(server, admin, 'PUT', `/device/${DEVICE}/command/${commandId}`, { status: 'Done', result: { brightness: 0.7 } })).status, 204)
    await page.locator('.status-value', { hasText: 'Done' }).waitFor()
    t.match(await page.locator('.command-status').textContent(), /brightness.*0\.7/s, 'the result is shown')
    await page.getByRole('cell', { name: 'Done' }).waitFor()
    t.ok(await page.getByRole('cell', { name: 'Done' }).isVisible(), 'command history shows the status')
    await shot(page, '04-device')

    // Networks, device types, users (admin pages).
    await page.getByRole('link', { name: 'Networks' }).click()
    await page.getByRole('heading', { name: 'Networks' }).waitFor()
    await page.getByLabel('Name').fill('Greenhouse')
    await page.getByLabel('Description').fill('Sensors by the tomatoes')
    await page.getByRole('button', { name: 'Create' }).click()
    await page.getByRole('cell', { name: 'Greenhouse', exact: true }).waitFor()
    await page.getByLabel('Name').fill('Greenhouse')
    await page.getByRole('button', { name: 'Create' }).click()
    const duplicate = await rest(server, admin, 'POST', '/network', { name: 'Greenhouse' })
    t.equal(duplicate.status, 403)
    const refusal = duplicate.body.message as string
    t.equal(await textWhen(page.locator('.error-message'), refusal), refusal, 'a duplicate name: the API message')
    await shot(page, '05-networks')
    await page.getByRole('link', { name: 'Device types' }).click()
    await page.getByRole('heading', { name: 'Device types' }).waitFor()
    await shot(page, '06-device-types')

    await page.getByRole('link', { name: 'Users' }).click()
    await page.getByRole('heading', { name: 'Users', exact: true }).waitFor()
    await page.getByLabel('Login').fill('restricted')
    await page.getByLabel('Password').fill('restricted-password-1')
    await page.getByRole('button', { name: 'Create user' }).click()
    await page.getByRole('link', { name: 'restricted' }).click()
    await page.getByRole('heading', { name: 'User restricted' }).waitFor()
    await page.getByLabel('Greenhouse').click()
    await page.getByRole('dialog').getByRole('button', { name: 'Assign' }).click()
    const users = (await rest(server, admin, 'GET', '/user?login=restricted')).body as Array<{ id: number }>
    const restrictedId = users[0]!.id
    for (let i = 0; i < 50 && (await rest(server, admin, 'GET', `/user/${restrictedId}`)).body.networks.length === 0; i++) await page.waitForTimeout(100)
    t.same((await rest(server, admin, 'GET', `/user/${restrictedId}`)).body.networks.map((n: { name: string }) => n.name), ['Greenhouse'], 'network assigned from the console')
    await shot(page, '07-user')

    // A script token, shown once with a copy button; it works and is scoped. Submitted at once, before
    // the page's user list is back: the default user (yourself) needs no list.
    await page.getByRole('link', { name: 'Script token' }).click()
    await page.getByLabel('Network ids').fill('1')
    await page.getByRole('button', { name: 'Create token' }).click()
    const token = await page.getByLabel('Access token').inputValue()
    t.match(token, /^ey/, 'token shown')
    t.ok(await page.getByRole('button', { name: 'Copy access token' }).isVisible(), 'with a copy button')
    t.equal((await rest(server, token, 'GET', `/device/${DEVICE}`)).status, 200, 'the minted token reads devices')
    t.equal((await rest(server, token, 'POST', `/device/${DEVICE}/command`, { command: 'x' })).status, 403, 'but has only the actions chosen')
    await shot(page, '08-token')

    // Sign out, then the restricted user: the API's permission errors are shown as they are.
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByText('You are signed out.').waitFor()
    await signIn(page, consoleUrl, 'restricted', 'restricted-password-1')
    await page.getByRole('heading', { name: 'Devices' }).waitFor()
    t.equal(await page.getByRole('link', { name: 'Users' }).count(), 0, 'no Users link for a client')
    // The same token the console holds: the user's login token.
    const signedIn = await fetch(`${server.url}/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: 'restricted', password: 'restricted-password-1' }) })
    const restricted = ((await signedIn.json()) as { accessToken: string }).accessToken
    const forbidden = await rest(server, restricted, 'GET', '/user')
    t.equal(forbidden.status, 403)
    await page.goto(`${consoleUrl}#/users`)
    await page.locator('.error-message').waitFor()
    t.equal(await page.locator('.error-message').textContent(), forbidden.body.message, 'GET /user refused: the API message')
    await shot(page, '09-restricted-users')
    const hidden = await rest(server, restricted, 'GET', `/device/${DEVICE}`)
    await page.goto(`${consoleUrl}#/device/${DEVICE}`)
    await page.locator('.error-message').waitFor()
    t.equal(await page.locator('.error-message').textContent(), hidden.body.message, `a device outside the user's networks: ${hidden.status} with the API message`)
    await shot(page, '10-restricted-device')

    t.same(pageErrors, [], 'no uncaught errors in the page')
  })

  t.test('an expired access token is refreshed; an expired session signs out with a message', async (t) => {
    execFileSync(process.execPath, [join(ROOT, 'scripts', 'build-console.mjs')], { cwd: ROOT, stdio: 'pipe' })
    const lifetimes = { accessMs: 1500, refreshMs: 8000 }
    const server = await startServer({ port: 0, admin: { password: PASSWORD }, tokenLifetimes: lifetimes, db: await consoleDatabase(t) })
    t.teardown(() => server.close())
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true })
    t.teardown(() => browser.close())
    const page = await browser.newPage()
    page.setDefaultTimeout(10_000)
    // When each token arrived: the waits below count from these, not from a guess of how long the
    // steps between take (under load they can outlast a token, or the page can refresh early on its own).
    let signedInAt = Infinity
    let accessAt = Infinity
    const refreshes: number[] = []
    page.on('response', (res) => {
      if (res.status() !== 201 || res.request().method() !== 'POST') return
      if (res.url().endsWith('/token')) signedInAt = accessAt = Date.now()
      if (res.url().endsWith('/token/refresh')) refreshes.push(accessAt = Date.now())
    })
    const until = async (at: number): Promise<void> => { await page.waitForTimeout(Math.max(0, at - Date.now())) }
    // Keyboard only: Tab to the login field, type, Tab, type, Enter.
    await page.goto(server.consoleUrl!)
    // The app renders after its script runs: wait for the form before typing blind.
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
    await page.keyboard.press('Tab')
    await page.keyboard.type('dhadmin')
    await page.keyboard.press('Tab')
    await page.keyboard.type(PASSWORD)
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { name: 'Devices' }).waitFor()
    // The focus moves in an effect after the page renders: wait for it.
    t.equal(await focusWhen(page, 'main'), 'main', 'after a page change the focus is on the content')
    await page.keyboard.press('Tab')
    t.equal(await focusWhen(page, 'device-search'), 'device-search', 'and Tab reaches its first control')
    // Past the newest access token's life (the refresh token lives on): the next request renews it.
    await until(accessAt + lifetimes.accessMs + 300)
    const before = refreshes.length
    await page.getByRole('link', { name: 'Networks' }).click()
    // The devices page lists each device's network too: wait until the Networks page replaced it.
    await page.getByRole('heading', { name: 'Networks' }).waitFor()
    await page.getByRole('cell', { name: 'Sample Network', exact: true }).waitFor()
    t.ok(refreshes.length > before, `the expired access token was renewed (${refreshes.length - before} refresh)`)
    t.equal(await page.locator('.error').count(), 0, 'without an error')
    // Past both: the refresh token has ended, and with it the session.
    await until(Math.max(signedInAt + lifetimes.refreshMs, accessAt + lifetimes.accessMs) + 300)
    await page.getByRole('link', { name: 'Devices' }).click()
    await page.getByText('Your session has ended. Please sign in again.').waitFor()
    t.ok(await page.getByRole('button', { name: 'Sign in' }).isVisible(), 'back to the sign-in form')
    t.equal(await page.evaluate('sessionStorage.length'), 0, 'tokens forgotten')
  })

  t.test('the console is off with console: false', async (t) => {
    const server = await startServer({ port: 0, console: false })
    t.teardown(() => server.close())
    t.equal(server.consoleUrl, undefined)
    const res = await fetch(`http://127.0.0.1:${server.port}/api/console`)
    t.equal(res.status, 404)
  })
}
