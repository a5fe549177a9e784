/**
 * The console's paged lists in real headless Chromium: 1,500 devices a page at a time with the
 * total, moving through the pages (kept in the URL across a reload), and a search that ignores
 * case and finds devices by name and by id. Screenshots go to test-artifacts/console/.
 */
import { existsSync } from 'node:fs'
import t from 'tap'
import type { Page } from 'playwright-core'
import type { RunningServer } from '../../lib/start-server.js'
import { CHROMIUM, PASSWORD as CONSOLE_PASSWORD, rest, setup as setupConsole, shot, signIn } from '../fixtures/console-browser.js'

const TOTAL = 1500
const SPECIAL: Array<[string, string]> = [['hall-thermo', 'Thermostat Hall'], ['THERM-7', 'Boiler room'], ['attic-fan', 'Attic fan']]

/** 1,500 devices over REST, 50 requests at a time. */
async function seed (server: RunningServer, admin: string): Promise<void> {
  const devices: Array<[string, string]> = [...SPECIAL]
  for (let i = 1; devices.length < TOTAL; i++) devices.push([`node-${String(i).padStart(4, '0')}`, `Sensor ${String(i).padStart(4, '0')}`])
  for (let at = 0; at < devices.length; at += 50) {
    const answers = await Promise.all(devices.slice(at, at + 50).map(([id, name]) => rest(server, admin, 'PUT', `/device/${id}`, { name })))
    const failed = answers.find((a) => a.status !== 204)
    if (failed !== undefined) throw new Error(`seeding: ${failed.status} ${JSON.stringify(failed.body)}`)
  }
}

const names = async (page: Page): Promise<string[]> => page.locator('tbody tr td:nth-child(2) a').allTextContents()
const hashQuery = async (page: Page): Promise<string> => page.evaluate('location.hash') as Promise<string>

async function rangeIs (page: Page, text: string): Promise<void> {
  try {
    await page.locator('.pager-range', { hasText: text }).waitFor()
  } catch (error) {
    const seen = await page.locator('.pager-range').textContent().catch(() => 'no range')
    throw new Error(`waiting for "${text}": the range reads "${seen}" at ${await hashQuery(page)}`, { cause: error })
  }
}

if (!existsSync(CHROMIUM)) {
  t.fail(`Chromium is missing at ${CHROMIUM}: install Debian's package (apt-get install -y chromium) or set DEVICEHUB_CHROMIUM`)
} else {
  t.test('1,500 devices: pages with the total, and a search by name or id in any case', async (t) => {
    const { server, browser, admin, consoleUrl } = await setupConsole(t)
    const started = Date.now()
    await seed(server, admin)
    t.same((await rest(server, admin, 'GET', '/device/count')).body, { count: TOTAL }, `seeded ${TOTAL} devices in ${Date.now() - started} ms`)
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } })
    const pageErrors: string[] = []
    page.on('pageerror', (error) => pageErrors.push(error.message))
    page.setDefaultTimeout(15_000)
    await signIn(page, consoleUrl, 'dhadmin', CONSOLE_PASSWORD)
    await page.getByRole('heading', { name: 'Devices' }).waitFor()

    // The first page: 50 rows, the range and the total.
    await rangeIs(page, '1–50 of 1,500')
    t.equal(await page.locator('tbody tr').count(), 50, 'one page of 50 rows, not 1,000')
    t.same((await names(page)).slice(0, 3), ['Attic fan', 'Boiler room', 'Sensor 0001'], 'sorted by name')
    t.match(await page.locator('.pager').textContent(), /of 30/, '30 pages')
    t.ok(await page.getByRole('button', { name: 'Previous page' }).isDisabled(), 'no previous page on the first')
    await shot(page, 'device-list-01-first-page')
    const height = await page.evaluate('document.documentElement.scrollHeight') as number
    t.ok(height < 4000, `the page is ${height} px tall`)

    // Next, then a reload keeps the page.
    await page.getByRole('button', { name: 'Next page' }).click()
    await rangeIs(page, '51–100 of 1,500')
    t.equal((await names(page))[0], 'Sensor 0049', 'the second page starts where the first ended')
    t.match(await hashQuery(page), /page=2/, 'the page is in the URL')
    await page.reload()
    await rangeIs(page, '51–100 of 1,500')
    t.equal((await names(page))[0], 'Sensor 0049', 'a reload shows the same page')
    await page.goBack()
    await rangeIs(page, '1–50 of 1,500')
    t.pass('Back returns to the previous page of the list')

    // Last, a page jump, and a larger page size.
    await page.getByRole('button', { name: 'Last page' }).click()
    await rangeIs(page, '1,451–1,500 of 1,500')
    t.same((await names(page)).at(-1), 'Thermostat Hall', 'the last page ends with the last name')
    t.ok(await page.getByRole('button', { name: 'Next page' }).isDisabled(), 'no next page on the last')
    await page.getByLabel('Page', { exact: true }).fill('10')
    await page.getByLabel('Page', { exact: true }).press('Enter')
    await rangeIs(page, '451–500 of 1,500')
    t.equal(await page.locator('tbody tr').count(), 50)
    await shot(page, 'device-list-02-page-10')
    await page.getByLabel('Per page').selectOption('200')
    await rangeIs(page, '1–200 of 1,500')
    await page.locator('tbody tr:nth-child(200)').waitFor()
    t.equal(await page.locator('tbody tr').count(), 200, '200 rows per page')
    t.match(await page.locator('.pager').textContent(), /of 8/, '8 pages')
    await page.getByLabel('Per page').selectOption('50')
    await rangeIs(page, '1–50 of 1,500')

    // Search: lower case finds a name and an id written in capitals; the total follows.
    const search = page.getByLabel('Search by name or id')
    await search.fill('therm')
    await rangeIs(page, '1–2 of 2')
    t.same(await names(page), ['Boiler room', 'Thermostat Hall'], '"therm" finds the name Thermostat and the id THERM-7')
    t.same(await page.locator('tbody tr td:nth-child(3)').allTextContents(), ['THERM-7', 'hall-thermo'])
    t.match(await hashQuery(page), /q=therm/, 'the search is in the URL')
    await shot(page, 'device-list-03-search')
    await search.fill('HALL-THERMO')
    await rangeIs(page, '1–1 of 1')
    t.same(await names(page), ['Thermostat Hall'], 'an id in the wrong case')
    await search.fill('sensor 12')
    await rangeIs(page, '1–50 of 100')
    t.equal((await names(page))[0], 'Sensor 1200', '"sensor 12" matches Sensor 1200…1299')
    await page.getByRole('button', { name: 'Next page' }).click()
    await rangeIs(page, '51–100 of 100')
    await page.reload()
    await rangeIs(page, '51–100 of 100')
    t.equal(await page.getByLabel('Search by name or id').inputValue(), 'sensor 12', 'a reload keeps the search and its page')
    await page.getByLabel('Search by name or id').fill('50%')
    await rangeIs(page, 'No devices')
    t.ok(await page.getByText('No devices match.').isVisible(), '% is not a wildcard')
    await page.getByLabel('Search by name or id').fill('')
    await rangeIs(page, '1–50 of 1,500')
    await shot(page, 'device-list-04-cleared')

    // Networks use the same pager.
    const created = []
    for (let i = 1; i <= 60; i++) created.push((await rest(server, admin, 'POST', '/network', { name: `Net ${String(i).padStart(2, '0')}` })).status)
    t.same(new Set(created), new Set([201]), '60 more networks')
    await page.getByRole('link', { name: 'Networks' }).click()
    await rangeIs(page, '1–50 of 61')
    await page.getByRole('button', { name: 'Next page' }).click()
    await rangeIs(page, '51–61 of 61')
    t.equal(await page.locator('tbody tr').count(), 11, 'the rest on page 2')
    await shot(page, 'device-list-05-networks')
    await page.getByRole('link', { name: 'Users' }).click()
    await rangeIs(page, '1–1 of 1')
    t.pass('users are paged too')

    t.same(pageErrors, [], 'no uncaught errors in the page')
  })
}
