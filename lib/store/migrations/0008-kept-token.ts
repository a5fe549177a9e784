/**
 * Exact revocation (issue 23, D11): a password change revokes every token of the user but the
 * one that made it. `users.kept_token` holds that token's id (auth/token-id.ts), set with the
 * `token_version` increment of the change and cleared by the next increment; null = none kept.
 */
import type { Kysely, Migration } from 'kysely'

export function keptTokenMigration (): Migration {
  return {
    async up (db: Kysely<unknown>) {
      await db.schema.alterTable('users').addColumn('kept_token', 'varchar(32)').execute()
    },
    async down (db: Kysely<unknown>) {
      await db.schema.alterTable('users').dropColumn('kept_token').execute()
    }
  }
}
