import { sql } from 'kysely'
import type { Kysely } from 'kysely'
import type { OnlineTransition, PresenceRepository } from '../../core/presence/presence-ports.js'
import type { Database } from '../database.js'
import type { QueryTemplates } from '../query-templates.js'
import { createQueryTemplates } from '../query-templates.js'

/** Most devices one refresh statement names (bound parameters stay far below either dialect's limit). */
const REFRESH_CHUNK = 500

/**
 * Every statement is one conditional write, so two instances racing on one device agree: the
 * row lock orders them and only the first one's condition still holds (PostgreSQL re-checks
 * the WHERE clause on the locked row; SQLite has one writer).
 */
export function createPresenceRepository (db: Kysely<Database>, templates: QueryTemplates = createQueryTemplates()): PresenceRepository {
  // Never move lastSeen backwards (instances' clocks differ by a few ms).
  const forward = (now: unknown) => sql<number>`case when last_seen < ${now} then ${now} else last_seen end`
  return {
    async refresh (deviceIds, now, freshSince) {
      const refreshed = new Set<string>()
      if (deviceIds.length === 1) {
        // The one a busy device runs every few seconds: a template.
        const rows = await templates.run(db, 'presence-refresh', (slot) => db.updateTable('device_presence')
          .set({ last_seen: forward(slot(0)) })
          .where('device_id', '=', slot(1))
          .where('online', '=', 1)
          .where('last_seen', '>=', slot(2))
          .returning('device_id'), [now, deviceIds[0], freshSince])
        for (const row of rows) refreshed.add(row.device_id)
        return refreshed
      }
      for (let i = 0; i < deviceIds.length; i += REFRESH_CHUNK) {
        const rows = await db.updateTable('device_presence')
          .set({ last_seen: forward(now) })
          .where('device_id', 'in', deviceIds.slice(i, i + REFRESH_CHUNK))
          .where('online', '=', 1)
          .where('last_seen', '>=', freshSince)
          .returning('device_id')
          .execute()
        for (const row of rows) refreshed.add(row.device_id)
      }
      return refreshed
    },

    async markOnline (deviceId, now, freshSince): Promise<OnlineTransition> {
      const offline = await db.updateTable('device_presence')
        .set({ last_seen: forward(now), online: 1 })
        .where('device_id', '=', deviceId)
        .where('online', '=', 0)
        .executeTakeFirst()
      if (offline.numUpdatedRows > 0n) return 'came-online'
      const expired = await db.updateTable('device_presence')
        .set({ last_seen: forward(now) })
        .where('device_id', '=', deviceId)
        .where('last_seen', '<', freshSince)
        .executeTakeFirst()
      if (expired.numUpdatedRows > 0n) return 'expired'
      const inserted = await db.insertInto('device_presence')
        .values({ device_id: deviceId, last_seen: now, online: 1 })
        .onConflict((oc) => oc.column('device_id').doNothing())
        .executeTakeFirst()
      if ((inserted.numInsertedOrUpdatedRows ?? 0n) > 0n) return 'came-online'
      await db.updateTable('device_presence').set({ last_seen: forward(now) }).where('device_id', '=', deviceId).execute()
      return 'none'
    },

    async listExpired (freshSince, limit) {
      const rows = await db.selectFrom('device_presence').select('device_id')
        .where('online', '=', 1).where('last_seen', '<', freshSince)
        .orderBy('last_seen').limit(limit).execute()
      return rows.map((r) => r.device_id)
    },

    async markOffline (deviceId, freshSince) {
      const result = await db.updateTable('device_presence')
        .set({ online: 0 })
        .where('device_id', '=', deviceId)
        .where('online', '=', 1)
        .where('last_seen', '<', freshSince)
        .executeTakeFirst()
      return result.numUpdatedRows > 0n
    },

    async lastSeen (deviceIds) {
      const seen = new Map<string, number>()
      if (deviceIds.length === 0) return seen
      const rows = await db.selectFrom('device_presence').select(['device_id', 'last_seen'])
        .where('device_id', 'in', [...deviceIds]).execute()
      for (const row of rows) seen.set(row.device_id, Number(row.last_seen))
      return seen
    }
  }
}
