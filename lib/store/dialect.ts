/** What the store needs to know about its SQL dialect; nobody outside lib/store sees this. */
import type { Kysely } from 'kysely'
import type { Database } from './database.js'
import type { MigrationDialect } from './migrations/index.js'
import type { QueryTemplates } from './query-templates.js'
import type { MessageWrites } from './repositories/message-writes.js'

export type ConstraintKind = 'unique' | 'foreign-key'

export interface StoreDialect {
  readonly name: 'sqlite' | 'postgres'
  readonly migrations: MigrationDialect
  /**
   * What the store's query templates (query-templates.ts) put before each statement text: on
   * PostgreSQL the mark that runs it as a server-side prepared statement (parsed and planned
   * once per connection); '' where the driver caches statements by text itself (SQLite).
   */
  readonly templatePrefix: string
  /** Which constraint a driver error violates, if any. */
  classifyError(error: unknown): ConstraintKind | undefined
  /** Sends a notification inside the current transaction (PostgreSQL NOTIFY); absent = no-op. */
  notify?(db: Kysely<Database>, channel: string, payload: string): Promise<void>
  /**
   * The dialect's own message writes over `db` (the pool or one transaction); absent = the
   * repositories' own, which are SQLite's (a multi-row insert runs `insert or fail`). `templates`
   * are the store's compiled statements (query-templates.ts).
   */
  messageWrites?(db: Kysely<Database>, templates: QueryTemplates): MessageWrites
  /** Releases the driver's resources after Kysely is destroyed. */
  close?(db: Kysely<Database>): Promise<void>
}
