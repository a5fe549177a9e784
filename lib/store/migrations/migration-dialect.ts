/**
 * What a migration may vary by dialect. A leaf, so that the migrations and the list of them
 * (index.ts) both import it without importing each other.
 */
import type { ColumnDataType, ColumnDefinitionBuilder } from 'kysely'

/** What a migration may vary by dialect: how an identity primary key is declared, and PostgreSQL-only steps. */
export interface MigrationDialect {
  kind: 'sqlite' | 'postgres'
  identity: {
    type: ColumnDataType
    build: (column: ColumnDefinitionBuilder) => ColumnDefinitionBuilder
  }
}

export const sqliteMigrationDialect: MigrationDialect = {
  kind: 'sqlite',
  identity: { type: 'integer', build: (c) => c.primaryKey().autoIncrement() }
}

export const postgresMigrationDialect: MigrationDialect = {
  kind: 'postgres',
  identity: { type: 'bigint', build: (c) => c.primaryKey().generatedByDefaultAsIdentity() }
}
