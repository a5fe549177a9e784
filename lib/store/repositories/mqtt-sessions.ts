import { sql } from 'kysely'
import type { Kysely } from 'kysely'
import type { MqttSessionRepository } from '../../core/mqtt-sessions/mqtt-session-ports.js'
import type { Database } from '../database.js'

/**
 * One row per (user, client id, topic filter). Every write is one statement; the cursor only
 * moves forward, in the statement's condition, so two instances acknowledging for one client
 * (an old connection not yet noticed dead, the new one) never move it back.
 */
export function createMqttSessionRepository (db: Kysely<Database>): MqttSessionRepository {
  return {
    async list ({ userId, clientId }) {
      const rows = await db.selectFrom('mqtt_subscriptions').select(['topic', 'qos', 'cursor', 'created_at'])
        .where('user_id', '=', userId).where('client_id', '=', clientId)
        .orderBy('topic').execute()
      return rows.map((r) => ({
        topic: r.topic,
        qos: Number(r.qos),
        cursor: r.cursor === null ? null : Number(r.cursor),
        createdAt: Number(r.created_at)
      }))
    },

    async subscribe ({ userId, clientId }, topic, qos, now) {
      await db.insertInto('mqtt_subscriptions')
        .values({ user_id: userId, client_id: clientId, topic, qos, cursor: null, created_at: now })
        .onConflict((oc) => oc.columns(['user_id', 'client_id', 'topic']).doUpdateSet({ qos }))
        .execute()
    },

    async unsubscribe ({ userId, clientId }, topic) {
      await db.deleteFrom('mqtt_subscriptions')
        .where('user_id', '=', userId).where('client_id', '=', clientId).where('topic', '=', topic)
        .execute()
    },

    async advance ({ userId, clientId }, topic, cursor) {
      await db.updateTable('mqtt_subscriptions').set({ cursor })
        .where('user_id', '=', userId).where('client_id', '=', clientId).where('topic', '=', topic)
        .where((eb) => eb.or([eb('cursor', 'is', null), eb('cursor', '<', cursor)]))
        .execute()
    },

    async clear ({ userId, clientId }) {
      await db.deleteFrom('mqtt_subscriptions').where('user_id', '=', userId).where('client_id', '=', clientId).execute()
    },

    async setExpiry ({ userId, clientId }, expiresAt, holder) {
      let query = db.updateTable('mqtt_subscriptions').set({ expires_at: expiresAt })
        .where('user_id', '=', userId).where('client_id', '=', clientId)
      if (holder !== undefined) {
        query = query.where((eb) => eb.exists(eb.selectFrom('mqtt_session_holders as h').select('h.holder')
          .where('h.user_id', '=', userId).where('h.client_id', '=', clientId).where('h.holder', '=', holder)))
      }
      await query.execute()
    },

    async dropExpired (now, key) {
      // A hold whose lease lapsed longer ago than its session's interval: its instance died.
      // A null interval (never expires) makes the sum null, never due.
      const lapsed = sql<boolean>`lease_until + expiry_ms <= ${now}`
      // Not one statement with OR, which looked up every subscription's hold: the deadlines are
      // indexed (migration 0016), and the holds are scanned once, for one lapsed hold, which
      // there rarely is (a 100,000-session prune: 73-107 ms on the event loop, now 5-9 ms).
      let pastDeadline = db.deleteFrom('mqtt_subscriptions').where('expires_at', '<=', now)
      let heldByTheDead = db.deleteFrom('mqtt_subscriptions').where((eb) => eb(
        eb.refTuple('user_id', 'client_id'), 'in',
        eb.selectFrom('mqtt_session_holders').select(['user_id', 'client_id']).where(lapsed).$asTuple('user_id', 'client_id')
      ))
      let probe = db.selectFrom('mqtt_session_holders').select('user_id').where(lapsed).limit(1)
      let holds = db.deleteFrom('mqtt_session_holders').where(lapsed)
      if (key !== undefined) {
        pastDeadline = pastDeadline.where('user_id', '=', key.userId).where('client_id', '=', key.clientId)
        heldByTheDead = heldByTheDead.where('user_id', '=', key.userId).where('client_id', '=', key.clientId)
        probe = probe.where('user_id', '=', key.userId).where('client_id', '=', key.clientId)
        holds = holds.where('user_id', '=', key.userId).where('client_id', '=', key.clientId)
      }
      const deleted = Number((await pastDeadline.executeTakeFirst()).numDeletedRows)
      if (await probe.executeTakeFirst() === undefined) return deleted
      const held = Number((await heldByTheDead.executeTakeFirst()).numDeletedRows)
      // After the subscriptions, which were found by these holds.
      await holds.execute()
      return deleted + held
    },

    async holderOf ({ userId, clientId }) {
      const row = await db.selectFrom('mqtt_session_holders').select(['holder', 'since'])
        .where('user_id', '=', userId).where('client_id', '=', clientId).executeTakeFirst()
      return row === undefined ? undefined : { holder: row.holder, since: Number(row.since) }
    },

    async hold ({ userId, clientId }, holder, now, lease) {
      const held = { holder, since: now, expiry_ms: lease?.expiryMs ?? null, lease_until: lease?.until ?? null }
      await db.insertInto('mqtt_session_holders')
        .values({ user_id: userId, client_id: clientId, ...held })
        .onConflict((oc) => oc.columns(['user_id', 'client_id']).doUpdateSet(held))
        .execute()
    },

    async renewHolds (instance, until) {
      const prefix = `${instance}:`
      // A prefix compared as it is (LIKE would read `_` and `%` in it as patterns).
      await db.updateTable('mqtt_session_holders').set({ lease_until: until })
        .where('expiry_ms', 'is not', null).where(sql`substr(holder, 1, ${prefix.length})`, '=', prefix)
        .execute()
    },

    async release ({ userId, clientId }, holder) {
      // Only its own hold: a connection that took the session over meanwhile keeps it.
      await db.deleteFrom('mqtt_session_holders')
        .where('user_id', '=', userId).where('client_id', '=', clientId).where('holder', '=', holder)
        .execute()
    }
  }
}
