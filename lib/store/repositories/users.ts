import type { Kysely, SelectQueryBuilder, Selectable, Updateable } from 'kysely'
import type { UserFilter, UserPatch, UserRecord, UserRepository } from '../../core/users/user-ports.js'
import { UserRole, UserStatus } from '../../core/users/user-ports.js'
import { decodeBool, decodeJson, encodeBool, encodeJson } from '../codec.js'
import type { Database, UsersTable } from '../database.js'
import { applyPage } from '../paging.js'

type UserRow = Selectable<UsersTable>

function toRecord (row: UserRow): UserRecord {
  return {
    id: Number(row.id),
    login: row.login,
    passwordHash: row.password_hash,
    role: row.role as UserRole,
    status: row.status as UserStatus,
    loginAttempts: row.login_attempts,
    lastLogin: row.last_login === null ? null : Number(row.last_login),
    data: decodeJson(row.data),
    introReviewed: decodeBool(row.intro_reviewed),
    allDeviceTypesAvailable: decodeBool(row.all_device_types_available),
    tokenVersion: Number(row.token_version ?? 0),
    ...(row.kept_token === null || row.kept_token === undefined ? {} : { keptToken: row.kept_token })
  }
}

function toRow (patch: UserPatch): Updateable<UsersTable> {
  const row: Updateable<UsersTable> = {}
  if (patch.login !== undefined) row.login = patch.login
  if (patch.passwordHash !== undefined) row.password_hash = patch.passwordHash
  else if (patch.passwordRehash !== undefined) row.password_hash = patch.passwordRehash
  if (patch.role !== undefined) row.role = patch.role
  if (patch.status !== undefined) row.status = patch.status
  if (patch.loginAttempts !== undefined) row.login_attempts = patch.loginAttempts
  if (patch.lastLogin !== undefined) row.last_login = patch.lastLogin
  if (patch.data !== undefined) row.data = encodeJson(patch.data)
  if (patch.introReviewed !== undefined) row.intro_reviewed = encodeBool(patch.introReviewed)
  if (patch.allDeviceTypesAvailable !== undefined) row.all_device_types_available = encodeBool(patch.allDeviceTypesAvailable)
  return row
}

function applyFilter<O> (query: SelectQueryBuilder<Database, 'users', O>, filter: UserFilter): SelectQueryBuilder<Database, 'users', O> {
  if (filter.id !== undefined) query = query.where('id', '=', filter.id)
  if (filter.loginPattern !== undefined) query = query.where('login', 'like', filter.loginPattern)
  else if (filter.login !== undefined) query = query.where('login', '=', filter.login)
  if (filter.role !== undefined) query = query.where('role', '=', filter.role)
  if (filter.status !== undefined) query = query.where('status', '=', filter.status)
  return query
}

export function createUserRepository (db: Kysely<Database>): UserRepository {
  return {
    async findById (id) {
      const row = await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst()
      return row === undefined ? undefined : toRecord(row)
    },
    async findByLogin (login) {
      const row = await db.selectFrom('users').selectAll().where('login', '=', login).executeTakeFirst()
      return row === undefined ? undefined : toRecord(row)
    },
    async insert (user) {
      const row = await db.insertInto('users').values({
        login: user.login,
        password_hash: user.passwordHash,
        role: user.role,
        status: user.status,
        login_attempts: 0,
        last_login: null,
        data: encodeJson(user.data),
        intro_reviewed: encodeBool(user.introReviewed),
        all_device_types_available: encodeBool(user.allDeviceTypesAvailable)
      }).returning('id').executeTakeFirstOrThrow()
      return Number(row.id)
    },
    async update (id, patch) {
      const values = toRow(patch)
      if (Object.keys(values).length === 0) {
        return (await db.selectFrom('users').select('id').where('id', '=', id).executeTakeFirst()) !== undefined
      }
      const result = await db.updateTable('users').set((eb) => {
        // SET sees the old row: the version moves only on a loss (D11): the role lowered from
        // administrator (0) to client (1), the status leaving ACTIVE (0), a new password.
        const changes = []
        if (patch.role !== undefined) changes.push(eb('role', '<', patch.role))
        if (patch.status !== undefined && patch.status !== UserStatus.Active) changes.push(eb('status', '=', UserStatus.Active))
        if (patch.passwordHash !== undefined) changes.push(eb('password_hash', '<>', patch.passwordHash))
        if (changes.length === 0) return values
        const loses = eb.or(changes)
        return {
          ...values,
          token_version: eb.case().when(loses).then(eb('token_version', '+', 1)).else(eb.ref('token_version')).end(),
          // The increment spares at most the token that made it, and only until the next one.
          kept_token: eb.case().when(loses).then(patch.keepToken ?? null).else(eb.ref('kept_token')).end()
        }
      }).where('id', '=', id).executeTakeFirst()
      return result.numUpdatedRows > 0n
    },
    async delete (id) {
      const result = await db.deleteFrom('users').where('id', '=', id).executeTakeFirst()
      return result.numDeletedRows > 0n
    },
    async list (filter) {
      let query = applyFilter(db.selectFrom('users').selectAll(), filter)
      const order = filter.sortOrder === 'DESC' ? 'desc' : 'asc'
      query = filter.sortField === 'login'
        ? query.orderBy('login', order).orderBy('id', 'asc')
        : query.orderBy('id', filter.sortField === 'id' ? order : 'asc')
      return (await applyPage(query, filter).execute()).map(toRecord)
    },
    async count (filter) {
      const row = await applyFilter(
        db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('count')), filter
      ).executeTakeFirstOrThrow()
      return Number(row.count)
    },
    async countActiveAdmins (exceptId) {
      const row = await db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('count'))
        .where('role', '=', 0).where('status', '=', 0).where('id', '<>', exceptId).executeTakeFirstOrThrow()
      return Number(row.count)
    },
    async networkIds (userId) {
      const rows = await db.selectFrom('user_networks').select('network_id').where('user_id', '=', userId).orderBy('network_id').execute()
      return rows.map((r) => Number(r.network_id))
    },
    async deviceTypeIds (userId) {
      const rows = await db.selectFrom('user_device_types')
        .select('device_type_id')
        .where('user_id', '=', userId)
        .orderBy('device_type_id')
        .execute()
      return rows.map((r) => Number(r.device_type_id))
    },
    async assignNetwork (userId, networkId) {
      await db.insertInto('user_networks').values({ user_id: userId, network_id: networkId })
        .onConflict((oc) => oc.doNothing()).execute()
    },
    async unassignNetwork (userId, networkId) {
      await db.deleteFrom('user_networks').where('user_id', '=', userId).where('network_id', '=', networkId).execute()
    },
    async assignDeviceType (userId, deviceTypeId) {
      await db.insertInto('user_device_types').values({ user_id: userId, device_type_id: deviceTypeId })
        .onConflict((oc) => oc.doNothing()).execute()
    },
    async unassignDeviceType (userId, deviceTypeId) {
      await db.deleteFrom('user_device_types').where('user_id', '=', userId).where('device_type_id', '=', deviceTypeId).execute()
    },
    async unassignAllDeviceTypes (userId) {
      await db.deleteFrom('user_device_types').where('user_id', '=', userId).execute()
    },
    async clientsOfNetwork (networkId) {
      const rows = await db.selectFrom('user_networks').innerJoin('users', 'users.id', 'user_networks.user_id')
        .select('user_networks.user_id').where('user_networks.network_id', '=', networkId).where('users.role', '=', UserRole.Client)
        .orderBy('user_networks.user_id').execute()
      return rows.map((r) => Number(r.user_id))
    },
    async clientsOfDeviceType (deviceTypeId) {
      const rows = await db.selectFrom('user_device_types').innerJoin('users', 'users.id', 'user_device_types.user_id')
        .select('user_device_types.user_id').where('user_device_types.device_type_id', '=', deviceTypeId)
        .where('users.role', '=', UserRole.Client).where('users.all_device_types_available', '=', encodeBool(false))
        .orderBy('user_device_types.user_id').execute()
      return rows.map((r) => Number(r.user_id))
    }
  }
}
