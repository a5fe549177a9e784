/**
 * The device list at scale (issue #27 point 3): 100,000 devices in a SQLite file, then the
 * console's requests over HTTP: the count, a page at a deep offset, and a search, each the
 * median of several runs. Run with `node --import tsx bench/device-list.ts [devices]`.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { startServer } from '../lib/start-server.js'
import { openSqliteConnection } from '../lib/store/dialects/sqlite-driver.js'


const DEVICES = Number(process.argv[2] ?? 100_000)
const RUNS = 7
const KINDS = ['Thermostat', 'Sensor', 'Lamp', 'Valve', 'Meter']

const dir = mkdtempSync(join(tmpdir(), 'devicehub-device-list-'))
const file = join(dir, 'bench.db')
try {
  const server = await startServer({ db: file, admin: { password: 'bench-admin-password' } })
  try {
    // Rows straight into the file (one transaction): registering 100,000 devices through the API
    // would measure registration, not the list.
    const seeding = performance.now()
    const db = openSqliteConnection(file)
    const insert = db.prepare('insert into devices (device_id, name, network_id, device_type_id, is_blocked) values (?, ?, 1, 1, 0)')
    db.exec('begin')
    for (let i = 1; i <= DEVICES; i++) insert.run([`dev-${String(i).padStart(6, '0')}`, `${KINDS[i % KINDS.length]} ${i}`])
    db.exec('commit')
    // BENCH_NO_NAME_INDEX=1: as before migration 0009, for comparison.
    if (process.env.BENCH_NO_NAME_INDEX === '1') db.exec('drop index devices_name_idx')
    db.close()
    console.log(`seeded ${DEVICES} devices in ${Math.round(performance.now() - seeding)} ms`)

    const token = (await server.adminTokens()).accessToken
    const deep = Math.max(0, DEVICES - 50)
    const cases: Array<[string, string]> = [
      ['count', '/device/count'],
      ['first page (id order)', '/device?take=50'],
      [`page at skip=${deep} (id order)`, `/device?take=50&skip=${deep}`],
      ['first page by name (console default)', '/device?take=50&sortField=name'],
      [`page at skip=${deep} by name`, `/device?take=50&skip=${deep}&sortField=name`],
      ['count, search=therm', '/device/count?search=therm'],
      ['page, search=therm, by name', '/device?take=50&sortField=name&search=therm'],
      ['page at skip=19950, search=therm, by name', '/device?take=50&skip=19950&sortField=name&search=therm'],
      ['count, search=DEV-0999 (ids)', '/device/count?search=DEV-0999'],
      ['page, search with no match', '/device?take=50&search=no-such-device']
    ]
    console.log('| request | median ms | min ms | rows |')
    console.log('|---|---:|---:|---:|')
    for (const [label, path] of cases) {
      const times: number[] = []
      let rows = ''
      for (let run = 0; run < RUNS; run++) {
        const started = performance.now()
        const res = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${token}` } })
        const body = await res.json() as unknown
        times.push(performance.now() - started)
        if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`)
        rows = Array.isArray(body) ? String(body.length) : `count ${(body as { count: number }).count}`
      }
      times.sort((a, b) => a - b)
      console.log(`| ${label} | ${times[RUNS >> 1]!.toFixed(1)} | ${times[0]!.toFixed(1)} | ${rows} |`)
    }
  } finally {
    await server.close()
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
