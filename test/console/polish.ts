/**
 * Issue #27 points 5 and 7 in real headless Chromium: deleting a network or device type says
 * what it deletes, old error banners go away, no ring around the page on load, the favicon,
 * the token page's user and action pickers, and confirmed assignment changes.
 */
import { existsSync } from 'node:fs'
import t from 'tap'
import type { Browser, Page } from 'playwright-core'
import type { RunningServer } from '../../lib/start-server.js'
import { CHROMIUM, PASSWORD, countWhen, focusWhen, rest, setup, shot, signIn, textWhen } from '../fixtures/console-browser.js'

async function adminPage (browser: Browser, consoleUrl: string, errors: string[]): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 } })
  page.setDefaultTimeout(10_000)
  page.on('pageerror', (error) => errors.push(error.message))
  await signIn(page, consoleUrl, 'dhadmin', PASSWORD)
  await page.getByRole('heading', { name: 'Devices' }).waitFor()
  return page
}

async function createUser (server: RunningServer, admin: string, login: string): Promise<number> {
  const created = await rest(server, admin, 'POST', '/user', { login, password: `${login}-password-1`, role: 1, status: 0 })
  if (created.status !== 201) throw new Error(`POST /user: ${created.status} ${JSON.stringify(created.body)}`)
  return created.body.id as number
}

/** The claims of a devicehub access token (DeviceHive's shape: the compact claims under `payload`). */
function claims (token: string): { u: number, a: number[], n: unknown, dt: unknown } {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')).payload
}

if (!existsSync(CHROMIUM)) {
  t.fail(`Chromium is missing at ${CHROMIUM}: install Debian's package (apt-get install -y chromium) or set DEVICEHUB_CHROMIUM`)
} else {
  t.test('console polish (issue 27, points 5 and 7)', async (t) => {
    const { server, browser, admin, consoleUrl } = await setup(t)
    const pageErrors: string[] = []

    t.test('deleting a network or device type says how many devices go with it', async (t) => {
      const barn = (await rest(server, admin, 'POST', '/network', { name: 'Barn' })).body.id as number
      const shed = (await rest(server, admin, 'POST', '/network', { name: 'Empty shed' })).body.id as number
      for (const id of ['barn-1', 'barn-2', 'barn-3']) {
        t.equal((await rest(server, admin, 'PUT', `/device/${id}`, { name: id, networkId: barn })).status, 204)
      }
      const page = await adminPage(browser, consoleUrl, pageErrors)
      await page.getByRole('link', { name: 'Networks' }).click()
      // The devices page lists each device's network too: wait until the Networks page replaced it.
      await page.getByRole('heading', { name: 'Networks' }).waitFor()
      await page.getByRole('cell', { name: 'Barn', exact: true }).waitFor()

      await page.getByRole('button', { name: 'Delete Barn' }).click()
      const dialog = page.getByRole('dialog', { name: 'Delete network "Barn"?' })
      await dialog.waitFor()
      t.match(await dialog.textContent(), /It holds 3 devices\. Deleting the network deletes those devices too/, 'the dialog gives the count')
      t.ok(await dialog.getByRole('button', { name: 'Delete network and its 3 devices' }).isVisible(), 'and names the real choice')
      await shot(page, 'polish-01-delete-network-with-devices')
      await dialog.getByRole('button', { name: 'Cancel' }).click()
      await dialog.waitFor({ state: 'detached' })
      t.equal((await rest(server, admin, 'GET', `/network/${barn}`)).status, 200, 'cancel deletes nothing')

      // The list reloads its rows and its total: with the total held back, the rows that came back
      // first must not show under the old total (the range would count a row no longer listed).
      const range = page.locator('.pager-range')
      const rangeBefore = await range.textContent()
      let releaseCount = (): void => {}
      const countHeld = new Promise<void>((resolve) => { releaseCount = resolve })
      await page.route('**/network/count*', async (route) => { await countHeld; await route.continue() })
      const rowsBack = page.waitForResponse((res) => new URL(res.url()).pathname.endsWith('/network') && res.request().method() === 'GET')
      await page.getByRole('button', { name: 'Delete Barn' }).click()
      await dialog.getByRole('button', { name: 'Delete network and its 3 devices' }).click()
      await page.getByText('Deleted network Barn and its 3 devices.').waitFor()
      t.equal((await rest(server, admin, 'GET', `/network/${barn}`)).status, 404, 'forced: the network is gone')
      for (const id of ['barn-1', 'barn-2', 'barn-3']) t.equal((await rest(server, admin, 'GET', `/device/${id}`)).status, 404, `and device ${id}`)
      await rowsBack
      await page.waitForTimeout(300) // time for the page to show the rows if it would (it must not)
      t.equal(await range.textContent(), rangeBefore, 'while the total reloads, the range stays')
      t.equal(await page.getByRole('cell', { name: 'Barn', exact: true }).count(), 1, 'and so do the rows it counts')
      releaseCount() // the route stays, passing requests on
      // The list reloads after the note of success shows: wait for it.
      t.equal(await countWhen(page.getByRole('cell', { name: 'Barn', exact: true }), 0), 0, 'the list no longer shows it')
      t.equal(await textWhen(range, '1–2 of 2'), '1–2 of 2', 'the rows and the total change together')

      await page.getByRole('button', { name: 'Delete Empty shed' }).click()
      const empty = page.getByRole('dialog', { name: 'Delete network "Empty shed"?' })
      t.match(await empty.textContent(), /It holds no devices\./, 'an empty network says so')
      await shot(page, 'polish-02-delete-empty-network')
      await empty.getByRole('button', { name: 'Delete network', exact: true }).click()
      await page.getByText('Deleted network Empty shed.').waitFor()
      t.equal((await rest(server, admin, 'GET', `/network/${shed}`)).status, 404, 'the empty network is deleted plainly')

      // Device types: the same flow.
      const type = (await rest(server, admin, 'POST', '/devicetype', { name: 'Thermostat' })).body.id as number
      t.equal((await rest(server, admin, 'PUT', '/device/thermo-1', { name: 'thermo-1', deviceTypeId: type })).status, 204)
      await page.getByRole('link', { name: 'Device types' }).click()
      await page.getByRole('button', { name: 'Delete Thermostat' }).click()
      const typeDialog = page.getByRole('dialog', { name: 'Delete device type "Thermostat"?' })
      t.match(await typeDialog.textContent(), /It holds 1 device\. Deleting the device type deletes that device too/)
      await typeDialog.getByRole('button', { name: 'Delete device type and its 1 device' }).click()
      await page.getByText('Deleted device type Thermostat and its 1 device.').waitFor()
      t.equal((await rest(server, admin, 'GET', `/devicetype/${type}`)).status, 404, 'the type is gone')
      t.equal((await rest(server, admin, 'GET', '/device/thermo-1')).status, 404, 'with its device')
      await page.close()
    })

    t.test('an old error banner goes away after the next success or a page change', async (t) => {
      const page = await adminPage(browser, consoleUrl, pageErrors)
      await page.getByRole('link', { name: 'Networks' }).click()
      // The devices page lists each device's network too: wait until the Networks page replaced it.
      await page.getByRole('heading', { name: 'Networks' }).waitFor()
      await page.getByRole('cell', { name: 'Sample Network', exact: true }).waitFor()
      const duplicate = await rest(server, admin, 'POST', '/network', { name: 'Sample Network' })
      t.equal(duplicate.status, 403)
      await page.getByLabel('Name').fill('Sample Network')
      await page.getByRole('button', { name: 'Create' }).click()
      t.equal(await textWhen(page.locator('.error-message'), duplicate.body.message), duplicate.body.message, 'the refusal is shown')
      await shot(page, 'polish-03-stale-error-before')
      await page.getByLabel('Name').fill('Orchard')
      await page.getByRole('button', { name: 'Create' }).click()
      await page.getByText('Created network Orchard.').waitFor()
      t.equal(await page.locator('.error').count(), 0, 'a later success clears the old error')
      await shot(page, 'polish-04-stale-error-cleared')

      await page.getByLabel('Name').fill('Orchard')
      await page.getByRole('button', { name: 'Create' }).click()
      await page.locator('.error').waitFor()
      await page.getByRole('link', { name: 'Device types' }).click()
      await page.getByRole('heading', { name: 'Device types' }).waitFor()
      t.equal(await page.locator('.error').count(), 0, 'so does going to another page (the same page component)')
      t.equal(await page.locator('.notice').count(), 0, 'and no old success note either')
      await page.close()
    })

    t.test('no ring around the page on load; keyboard focus stays visible; a favicon', async (t) => {
      const page = await browser.newPage({ viewport: { width: 1280, height: 860 } })
      page.setDefaultTimeout(10_000)
      page.on('pageerror', (error) => pageErrors.push(error.message))
      const failed: string[] = []
      page.on('response', (res) => { if (res.status() >= 400) failed.push(`${res.status()} ${res.url()}`) })
      // The focused element and its computed ring (evaluated in the page, where the DOM is).
      const ring = async (): Promise<{ tag: string, outline: string, shadow: string, visible: boolean }> => page.evaluate(`(() => {
        const el = document.activeElement
        const style = getComputedStyle(el)
        return { tag: el.tagName.toLowerCase() + '#' + el.id, outline: style.outlineStyle, shadow: style.boxShadow, visible: el.matches(':focus-visible') }
      })()`)
      await page.goto(consoleUrl)
      await page.getByRole('button', { name: 'Sign in' }).waitFor()
      // The focus moves in an effect after the render: wait for it before reading its ring.
      await focusWhen(page, 'main')
      const onLogin = await ring()
      t.equal(onLogin.tag, 'main#main', 'the sign-in page focuses its content')
      t.same([onLogin.outline, onLogin.shadow], ['none', 'none'], 'without an outline or a shadow ring')
      await page.getByLabel('Login').fill('dhadmin')
      await page.getByLabel('Password').fill(PASSWORD)
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.getByRole('heading', { name: 'Devices' }).waitFor()
      await focusWhen(page, 'main')
      const onDevices = await ring()
      t.equal(onDevices.tag, 'main#main', 'after signing in the content has the focus')
      t.same([onDevices.outline, onDevices.shadow], ['none', 'none'], 'still without a ring')
      await shot(page, 'polish-05-no-focus-ring')
      await page.keyboard.press('Tab')
      const control = await ring()
      t.ok(control.visible, `Tab moves to a control (${control.tag}) that matches :focus-visible`)
      t.equal(control.outline, 'solid', 'and shows its focus ring')
      await shot(page, 'polish-06-keyboard-focus')

      const href = await page.locator('link[rel="icon"]').getAttribute('href')
      t.equal(href, '/api/console/favicon.svg', 'the page names its icon')
      const icon = await fetch(new URL(href!, consoleUrl))
      t.equal(icon.status, 200, 'the favicon is served')
      t.equal(icon.headers.get('content-type'), 'image/svg+xml')
      t.match(icon.headers.get('cache-control'), /max-age=\d+/, 'cached like the other assets')
      t.match(icon.headers.get('content-security-policy'), /default-src 'none'/, 'under the console CSP')
      t.match(await icon.text(), /^<svg /)
      t.same(failed, [], 'no request of the page failed (no /favicon.ico 404)')
      await page.close()
    })

    t.test('the token page picks a user by login and actions from the server list', async (t) => {
      const scripterId = await createUser(server, admin, 'scripter')
      const page = await adminPage(browser, consoleUrl, pageErrors)
      // Hold the user list back: yourself needs no list; another login must not be called unknown before it arrives.
      let release = (): void => {}
      const held = new Promise<void>((resolve) => { release = resolve })
      await page.route('**/user?sortField=login', async (route) => { await held; await route.continue() })
      await page.getByRole('link', { name: 'Script token' }).click()
      const user = page.getByLabel('User', { exact: true })
      t.equal(await user.inputValue(), 'dhadmin', 'yourself by default')
      await page.getByRole('button', { name: 'Create token' }).click()
      const adminId = (await rest(server, admin, 'GET', '/user/current')).body.id as number
      const mintedForSelf = claims(await page.getByLabel('Access token').inputValue())
      t.equal(mintedForSelf.u, adminId, 'a submit for yourself before the logins arrive mints at once')
      await user.fill('scripter')
      await page.getByRole('button', { name: 'Create token' }).click()
      const loading = 'The list of users is still loading; try again in a moment.'
      t.equal(await textWhen(page.locator('#token-user-error'), loading), loading,
        'a submit for another login before the logins arrive says so')
      t.equal(await page.getByLabel('Access token').count(), 0, 'and the token minted before is no longer shown')
      release()
      // The logins arrive with GET /user, after the page shows.
      await page.locator('#token-user-logins option').nth(1).waitFor({ state: 'attached' })
      const logins = await page.locator('#token-user-logins option').evaluateAll((options) => options.map((o) => (o as unknown as { value: string }).value))
      t.same(logins, ['dhadmin', 'scripter'], 'every login is offered to search (GET /user)')
      t.equal(await page.locator('fieldset input[type="checkbox"]').count(), 17, 'every action the server knows (2 to 18)')

      await user.fill('nobody-here')
      await page.getByRole('button', { name: 'Create token' }).click()
      const unknown = "There is no user with the login 'nobody-here'."
      t.equal(await textWhen(page.locator('#token-user-error'), unknown), unknown, 'an unknown login is caught')

      await user.fill('scripter')
      await page.getByRole('button', { name: 'Clear actions' }).click()
      await page.getByRole('button', { name: 'Create token' }).click()
      const noAction = 'Choose at least one action.'
      t.equal(await textWhen(page.locator('.error-message'), noAction), noAction, 'no action: nothing is sent')
      for (const action of ['GetNetwork', 'GetDevice', 'CreateDeviceNotification']) await page.getByLabel(action, { exact: true }).check()
      await shot(page, 'polish-07-token-form')
      await page.getByRole('button', { name: 'Create token' }).click()
      const token = await page.getByLabel('Access token').inputValue()
      const minted = claims(token)
      t.equal(minted.u, scripterId, 'the token acts for the user picked by login')
      t.same(minted.a, [2, 3, 9], 'and carries exactly the chosen actions')
      t.equal((await rest(server, token, 'GET', '/network')).status, 200, 'it works for a chosen action')
      t.equal((await rest(server, token, 'GET', '/user/current')).status, 403, 'and not for one left out')
      t.equal(await page.locator('.error').count(), 0, 'the earlier error is gone')
      await shot(page, 'polish-08-token-minted')
      await page.close()

      // A client sees only itself and cannot pick the administrator-only actions.
      const scripts = (await rest(server, admin, 'POST', '/network', { name: 'Scripts' })).body.id as number
      t.equal((await rest(server, admin, 'PUT', `/user/${scripterId}/network/${scripts}`)).status, 204)
      const client = await browser.newPage({ viewport: { width: 1280, height: 860 } })
      client.setDefaultTimeout(10_000)
      client.on('pageerror', (error) => pageErrors.push(error.message))
      await signIn(client, consoleUrl, 'scripter', 'scripter-password-1')
      await client.getByRole('heading', { name: 'Devices' }).waitFor()
      await client.getByRole('link', { name: 'Script token' }).click()
      await client.getByText('For you, scripter').waitFor()
      t.equal(await client.getByLabel('User', { exact: true }).count(), 0, 'no user picker for a client')
      t.ok(await client.getByLabel('ManageUser', { exact: true }).isDisabled(), 'an administrator-only action is greyed out')
      t.ok(await client.getByLabel('GetDevice', { exact: true }).isEnabled(), 'a client action is not')
      // Within what the client holds: its login token lists its networks, not '*', so the field starts with them.
      t.equal(await client.getByLabel('Network ids').inputValue(), String(scripts), 'a client starts from its own networks')
      await client.getByRole('button', { name: 'Create token' }).click()
      const own = claims(await client.getByLabel('Access token').inputValue())
      t.equal(own.u, scripterId, 'a client mints for itself')
      t.same(own.a, [3, 4, 5, 8, 9], 'with the default actions')
      await shot(client, 'polish-09-token-client')
      await client.close()
    })

    t.test('assigning a network or device type asks first', async (t) => {
      const userId = await createUser(server, admin, 'assignee')
      const network = (await rest(server, admin, 'POST', '/network', { name: 'Vineyard' })).body.id as number
      const type = (await rest(server, admin, 'POST', '/devicetype', { name: 'Valve' })).body.id as number
      const networksOf = async (): Promise<string[]> => ((await rest(server, admin, 'GET', `/user/${userId}`)).body.networks as Array<{ name: string }>).map((n) => n.name)
      const page = await adminPage(browser, consoleUrl, pageErrors)
      await page.goto(`${consoleUrl}#/users/${userId}`)
      await page.getByRole('heading', { name: 'User assignee' }).waitFor()
      const box = page.getByLabel('Vineyard', { exact: true })

      await box.click()
      const assign = page.getByRole('dialog', { name: 'Assign network Vineyard to user assignee?' })
      await assign.waitFor()
      await shot(page, 'polish-10-assign-confirm')
      await assign.getByRole('button', { name: 'Cancel' }).click()
      await assign.waitFor({ state: 'detached' })
      t.notOk(await box.isChecked(), 'dismissed: the box is unticked again')
      t.same(await networksOf(), [], 'and nothing was assigned')

      await box.click()
      await assign.getByRole('button', { name: 'Assign' }).click()
      await page.getByText('Assigned network Vineyard to assignee.').waitFor()
      t.same(await networksOf(), ['Vineyard'], 'accepted: assigned over REST')
      t.ok(await box.isChecked(), 'the box shows it')

      await box.click()
      const unassign = page.getByRole('dialog', { name: 'Unassign network Vineyard from user assignee?' })
      await unassign.getByRole('button', { name: 'Unassign' }).click()
      await page.getByText('Unassigned network Vineyard from assignee.').waitFor()
      t.same(await networksOf(), [], 'unassigned after confirming')
      t.equal(network > 0, true)

      // Device types: first stop "all device types", then a single type.
      t.equal((await rest(server, admin, 'GET', `/user/${userId}`)).body.allDeviceTypesAvailable, true)
      await page.getByLabel('All device types').click()
      await page.getByRole('dialog', { name: 'Stop allowing user assignee all device types?' }).getByRole('button', { name: 'Unassign' }).click()
      await page.getByLabel('Valve', { exact: true }).waitFor()
      t.equal((await rest(server, admin, 'GET', `/user/${userId}`)).body.allDeviceTypesAvailable, false, 'all device types: off after confirming')
      await page.getByLabel('Valve', { exact: true }).click()
      const typeDialog = page.getByRole('dialog', { name: 'Assign device type Valve to user assignee?' })
      // Escape before the dialog is open would dismiss nothing, and the dialog would then block the next click.
      await typeDialog.waitFor()
      await page.keyboard.press('Escape')
      await typeDialog.waitFor({ state: 'detached' })
      t.same((await rest(server, admin, 'GET', `/user/${userId}/devicetype`)).body, [], 'Escape dismisses: no type assigned')
      await page.getByLabel('Valve', { exact: true }).click()
      await typeDialog.getByRole('button', { name: 'Assign' }).click()
      await page.getByText('Assigned device type Valve to assignee.').waitFor()
      t.match((await rest(server, admin, 'GET', `/user/${userId}/devicetype`)).body, [{ id: type, name: 'Valve' }], 'accepted: the type is assigned')
      await shot(page, 'polish-11-assigned')
      await page.close()
    })

    t.test('no uncaught errors in the pages', async (t) => { t.same(pageErrors, []) })
  })
}
