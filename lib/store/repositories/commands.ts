import type { Kysely } from 'kysely'
import type { CommandRepository } from '../../core/commands/command-ports.js'
import type { Database } from '../database.js'

export function createCommandRepository (_db: Kysely<Database>): CommandRepository {
  return {}
}
