import type { Kysely } from 'kysely'
import type { ConfigurationRepository, SecretRepository } from '../../core/configuration/configuration-ports.js'
import type { Database } from '../database.js'

export function createConfigurationRepository (db: Kysely<Database>): ConfigurationRepository {
  async function get (name: string) {
    const row = await db.selectFrom('configuration').selectAll().where('name', '=', name).executeTakeFirst()
    return row === undefined ? undefined : { name: row.name, value: row.value, entityVersion: row.entity_version }
  }
  return {
    get,
    async put (name, value) {
      await db.insertInto('configuration').values({ name, value, entity_version: 0 })
        .onConflict((oc) => oc.column('name').doUpdateSet((eb) => ({
          value: eb.ref('excluded.value'),
          entity_version: eb('configuration.entity_version', '+', 1)
        })))
        .execute()
      return (await get(name))!
    },
    async delete (name) {
      const result = await db.deleteFrom('configuration').where('name', '=', name).executeTakeFirst()
      return result.numDeletedRows > 0n
    }
  }
}

export function createSecretRepository (db: Kysely<Database>): SecretRepository {
  async function get (name: string) {
    const row = await db.selectFrom('server_secrets').select('value').where('name', '=', name).executeTakeFirst()
    return row?.value
  }
  return {
    get,
    async setIfAbsent (name, value) {
      await db.insertInto('server_secrets').values({ name, value }).onConflict((oc) => oc.column('name').doNothing()).execute()
      return (await get(name))!
    },
    async set (name, value) {
      await db.insertInto('server_secrets').values({ name, value })
        .onConflict((oc) => oc.column('name').doUpdateSet({ value })).execute()
    }
  }
}
