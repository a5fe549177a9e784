/**
 * `devicehub migrate`: applies pending migrations and says what it did: created a new database,
 * applied some migrations, or found the database up to date.
 */
import { existsSync } from 'node:fs'
import { sql } from 'kysely'
import type { KyselyStore } from '../store/kysely-store.js'
import { describeLocation, isSqliteFile, openStore } from '../store/open-store.js'
import type { CliIo } from './cli-io.js'

/** Names of the migrations the database has run (none for a new database). */
async function appliedMigrations (store: KyselyStore): Promise<string[]> {
  try {
    const { rows } = await sql<{ name: string }>`select name from devicehub_migrations order by name`.execute(store.db)
    return rows.map((row) => row.name)
  } catch {
    // No bookkeeping table yet: nothing was ever migrated.
    return []
  }
}

async function withStore<T> (location: string, migrate: boolean, fn: (store: KyselyStore) => Promise<T>): Promise<T> {
  const store = await openStore(location, { migrate })
  try {
    return await fn(store)
  } finally {
    await store.close()
  }
}

/**
 * @example
 * await migrateStore('./devicehub.db', io)
 * // "Created database ./devicehub.db: applied 17 migrations (0001-initial … 0017-draw-xid)."
 */
export async function migrateStore (location: string, io: CliIo): Promise<void> {
  const where = describeLocation(location)
  const isNewFile = isSqliteFile(location) && !existsSync(location)
  const before = isNewFile ? [] : await withStore(location, false, appliedMigrations)
  const after = await withStore(location, true, appliedMigrations)
  const applied = after.filter((name) => !before.includes(name))
  const range = applied.length === 1 ? applied[0] : `${applied[0]} … ${applied.at(-1)}`
  if (isNewFile) io.out(`Created database ${where}: applied ${applied.length} migrations (${range}).`)
  else if (applied.length === 0) {
    io.out(`Database ${where} is up to date (${after.length} migrations, the last ${after.at(-1)}); nothing to apply.`)
  }
  else if (before.length === 0) io.out(`Database ${where} was empty: created every table (${applied.length} migrations, ${range}).`)
  else {
    const count = `${applied.length} pending migration${applied.length === 1 ? '' : 's'}`
    io.out(`Database ${where}: applied ${count} (${range}); it is up to date.`)
  }
}
