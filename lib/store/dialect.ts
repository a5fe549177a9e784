/** What the store needs to know about its SQL dialect; nobody outside lib/store sees this. */
import type { Kysely } from 'kysely'
import type { Database } from './database.js'
import type { MigrationDialect } from './migrations/index.js'
import type { MessageWrites } from './repositories/message-writes.js'

export type ConstraintKind = 'unique' | 'foreign-key'

export interface StoreDialect {
  readonly name: 'sqlite' | 'postgres'
  readonly migrations: MigrationDialect
  /** Which constraint a driver error violates, if any. */
  classifyError(error: unknown): ConstraintKind | undefined
  /** Sends a notification inside the current transaction (PostgreSQL NOTIFY); absent = no-op. */
  notify?(db: Kysely<Database>, channel: string, payload: string): Promise<void>
  /**
   * The dialect's own message writes over `db` (the pool or one transaction); absent = the
   * repositories' own, which are SQLite's (a multi-row insert runs `insert or fail`).
   */
  messageWrites?(db: Kysely<Database>): MessageWrites
  /** Releases the driver's resources after Kysely is destroyed. */
  close?(db: Kysely<Database>): Promise<void>
}
