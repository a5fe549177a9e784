/**
 * Users (spec §5.8-§5.10, auth spec §4.5 with D1 and D7): lists and counts for ManageUser,
 * reads with the user's networks, create and update with the contract's field rules, and the
 * user <-> network and user <-> device-type links. Password hashes and login counters never
 * leave this file: every answer goes through a view.
 */
import { Action } from '../auth/actions.js'
import { requireAction, scopeAllowsDeviceType, scopeAllowsNetwork } from '../auth/permissions.js'
import type { Principal } from '../auth/principal.js'
import { hashPassword } from '../auth/passwords.js'
import { revokeTokens, revokeUser } from '../auth/revocations.js'
import { tokenId } from '../auth/token-id.js'
import type { ServiceContext } from '../context.js'
import { DeviceHubError, badRequest, forbidden, notFound, unauthorized } from '../errors.js'
import type { ListQueryInput } from '../networks/list-query.js'
import type { DataScope, Store } from '../ports.js'
import { FULL_SCOPE } from '../ports.js'
import { parseListQuery } from '../networks/list-query.js'
import { toNamedEntityView } from '../networks/named-entity-service.js'
import type { NamedEntityView } from '../networks/network-schemas.js'
import { formatNullableTimestamp } from '../time.js'
import { jsonObjectOrNull, requireBody, validationMessage } from '../validation.js'
import type { UserFilter, UserPatch, UserRecord } from './user-ports.js'
import { UserRole, UserStatus } from './user-ports.js'
import type { UserBody, UserCreatedView, UserDeviceTypeView, UserListView, UserNetworkView, UserView } from './user-schemas.js'

export type { UserBody, UserCreatedView, UserDeviceTypeView, UserListView, UserNetworkView, UserView } from './user-schemas.js'

export interface UserListInput extends ListQueryInput {
  login?: string
  loginPattern?: string
  role?: number
  status?: number
}

export interface UserService {
  list(principal: Principal | undefined, input: UserListInput): Promise<UserListView[]>
  count(principal: Principal | undefined, input: UserListInput): Promise<{ count: number }>
  get(principal: Principal | undefined, id: number): Promise<UserView>
  current(principal: Principal | undefined): Promise<UserView>
  create(principal: Principal | undefined, body: UserBody | undefined): Promise<UserCreatedView>
  update(principal: Principal | undefined, id: number, body: UserBody | undefined): Promise<void>
  updateCurrent(principal: Principal | undefined, body: UserBody | undefined): Promise<void>
  delete(principal: Principal | undefined, id: number): Promise<void>
  getNetwork(principal: Principal | undefined, userId: number, networkId: number): Promise<UserNetworkView>
  assignNetwork(principal: Principal | undefined, userId: number, networkId: number): Promise<void>
  unassignNetwork(principal: Principal | undefined, userId: number, networkId: number): Promise<void>
  listDeviceTypes(principal: Principal | undefined, userId: number): Promise<NamedEntityView[]>
  getDeviceType(principal: Principal | undefined, userId: number, deviceTypeId: number): Promise<UserDeviceTypeView>
  assignDeviceType(principal: Principal | undefined, userId: number, deviceTypeId: number): Promise<void>
  unassignDeviceType(principal: Principal | undefined, userId: number, deviceTypeId: number): Promise<void>
  allowAllDeviceTypes(principal: Principal | undefined, userId: number): Promise<void>
  disallowAllDeviceTypes(principal: Principal | undefined, userId: number): Promise<void>
}

export const UserMessages = {
  login: 'Field cannot be empty. The length of login should be from 3 to 128 symbols.',
  password: 'Password can contain only from 6 to 128 symbols!',
  role: 'User role is invalid or empty',
  status: 'Invalid user status',
  duplicate: 'User with such login already exists. Please, select another one',
  adminRequired: 'Admin permissions required for this action',
  deleteSelf: 'You can not delete a user or access key that you use to authenticate this request',
  currentMissing: 'Can not get current user.',
  allDeviceTypes: 'Cannot assign device type to user with all device types allowed',
  lastAdmin: 'The last active administrator cannot be deleted, demoted or disabled'
} as const

const SORT_FIELDS = { id: 'id', login: 'login' } as const

export function userNotFound (id: number): DeviceHubError {
  return notFound(`User with id = ${id} not found`)
}

export function toUserListView (user: UserRecord): UserListView {
  return {
    id: user.id,
    login: user.login,
    role: user.role,
    status: user.status,
    lastLogin: formatNullableTimestamp(user.lastLogin),
    data: user.data,
    introReviewed: user.introReviewed,
    allDeviceTypesAvailable: user.allDeviceTypesAvailable
  }
}

function checkLogin (value: unknown): string {
  if (value === undefined || value === null) {
    throw badRequest(validationMessage([{ property: 'login', value: null, message: UserMessages.login }]))
  }
  const login = typeof value === 'string' ? value.trim() : ''
  if (login.length < 3 || login.length > 128) throw badRequest(UserMessages.login)
  return login
}

function checkPassword (value: unknown): string {
  if (typeof value !== 'string' || value.length < 6 || value.length > 128) throw badRequest(UserMessages.password)
  return value
}

function checkRole (value: unknown): UserRole {
  if (value === undefined || value === null) throw badRequest(UserMessages.role)
  if (value !== UserRole.Administrator && value !== UserRole.Client) {
    throw badRequest(validationMessage([{ property: 'role', value, message: UserMessages.role }]))
  }
  return value
}

function checkStatus (value: unknown): UserStatus {
  if (value !== UserStatus.Active && value !== UserStatus.LockedOut && value !== UserStatus.Disabled) throw badRequest(UserMessages.status)
  return value
}

function optionalBoolean (value: unknown): boolean | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'boolean') throw badRequest()
  return value
}

/**
 * The scope the links of a user (`/user/{id}/network...`, `/user/{id}/devicetype...`, the
 * `networks` of a user read) are checked against. An administrator manages assignments by its
 * action alone, as DeviceHive does, whatever networks or device types its token lists (a token
 * with `n: null` still assigns a network created after its login); anyone else stays within
 * its own scope, so it hands out and sees nothing it could not see itself.
 */
function linkScope (principal: Principal): DataScope {
  return principal.isAdmin && principal.kind !== 'plugin' ? FULL_SCOPE : principal.scope
}

/**
 * What an update takes away (D11), by the rule the store moves the token version with: the role
 * lowered from administrator or the status leaving ACTIVE is a loss of `rights`; a new password
 * alone revokes the old tokens (`password`); anything else (`data`, `introReviewed`, login, a
 * raised role, a return to ACTIVE) takes nothing.
 */
function lossOf (before: UserRecord, patch: UserPatch): 'rights' | 'password' | undefined {
  const lowered = patch.role !== undefined && before.role === UserRole.Administrator && patch.role !== UserRole.Administrator
  const leaves = patch.status !== undefined && before.status === UserStatus.Active && patch.status !== UserStatus.Active
  if (lowered || leaves) return 'rights'
  return patch.passwordHash !== undefined ? 'password' : undefined
}

/** The user a principal acts as; plugins and the system principal have none here (401). */
function callerUser (principal: Principal): UserRecord {
  if (principal.kind !== 'user') throw unauthorized()
  return principal.user
}

function callerId (principal: Principal): number | undefined {
  return principal.kind === 'user' ? principal.user.id : principal.kind === 'plugin' ? principal.owner.id : undefined
}

/**
 * The list and count filter. A caller that is not an administrator reads only its own account
 * (like `GET /user/{id}`), whatever actions its token lists; the query's filters still apply to
 * that one row, so a client sees itself or nothing.
 */
function filterOf (principal: Principal, input: UserListInput): UserFilter {
  const filter: UserFilter = {}
  if (!principal.isAdmin) filter.id = callerId(principal) ?? 0
  if (input.login !== undefined) filter.login = input.login
  if (input.loginPattern !== undefined) filter.loginPattern = input.loginPattern
  if (input.role !== undefined) filter.role = input.role
  if (input.status !== undefined) filter.status = input.status
  return filter
}

/**
 * The one rule of every operation on `/user/{id}...`, whatever the verb: an administrator may
 * act on any user; anyone else only on itself, and any other id (existing or not) answers the
 * same 403, so nothing tells whether that user exists.
 */
function requireUserTarget (principal: Principal, id: number): void {
  // A plugin token never acts on an account, its owner's included (issue 22).
  if (principal.kind === 'plugin') throw forbidden()
  if (!principal.isAdmin && callerId(principal) !== id) throw forbidden(`User with id = ${id} not found`)
}

/** Refuses to leave the server without an active administrator (inside the write transaction). */
async function keepAnAdmin (tx: Store, target: UserRecord, after: { role?: UserRole, status?: UserStatus } | 'deleted'): Promise<void> {
  if (target.role !== UserRole.Administrator || target.status !== UserStatus.Active) return
  const stays = after !== 'deleted' && (after.role ?? target.role) === UserRole.Administrator &&
    (after.status ?? target.status) === UserStatus.Active
  if (stays) return
  if ((await tx.users.countActiveAdmins(target.id)) === 0) throw forbidden(UserMessages.lastAdmin)
}

function rethrowConflict (error: unknown): never {
  if (error instanceof DeviceHubError && error.code === 'CONFLICT') throw forbidden(UserMessages.duplicate)
  throw error
}

async function refuseDuplicate (store: Store, login: string, exceptId?: number): Promise<void> {
  const existing = await store.users.findByLogin(login)
  if (existing !== undefined && existing.id !== exceptId) throw forbidden(UserMessages.duplicate)
}

/** The shared update of `PUT /user/{id}` and `PUT /user/current` (§5.8). */
async function applyUpdate (
  { store, bus }: ServiceContext, principal: Principal, target: UserRecord, body: UserBody | undefined
): Promise<void> {
  if (body === undefined || body === null) return
  const self = callerId(principal) === target.id
  if (!principal.isAdmin) {
    // D1: no promotion to admin, no password change for someone else.
    if (body.role === UserRole.Administrator) throw forbidden()
    if (!self && body.password !== undefined && body.password !== null && body.password !== '') throw forbidden()
    if (body.login !== undefined || body.status !== undefined || body.role !== undefined) throw forbidden(UserMessages.adminRequired)
  }
  const patch: UserPatch = {}
  if (body.login !== undefined && body.login !== null) {
    patch.login = checkLogin(body.login)
    await refuseDuplicate(store, patch.login, target.id)
  }
  if (body.password !== undefined && body.password !== null && body.password !== '') {
    patch.passwordHash = await hashPassword(checkPassword(body.password))
  }
  if (body.role !== undefined && body.role !== null) patch.role = checkRole(body.role)
  if (body.status !== undefined && body.status !== null) patch.status = checkStatus(body.status)
  // data is always replaced: absent or null clears it (§5.8).
  patch.data = jsonObjectOrNull(body.data) ?? null
  const introReviewed = optionalBoolean(body.introReviewed)
  if (introReviewed !== undefined) patch.introReviewed = introReviewed
  // D11: a password change spares the token that changed its own user's password.
  if (patch.passwordHash !== undefined && self && principal.kind === 'user') patch.keepToken = tokenId(principal.token)
  try {
    await store.transaction(async (tx) => {
      const before = await tx.users.findById(target.id)
      if (before === undefined) throw userNotFound(target.id)
      await keepAnAdmin(tx, before, patch)
      const loss = lossOf(before, patch)
      // A loss of rights spares no token, the caller's included.
      if (loss === 'rights') delete patch.keepToken
      if (!(await tx.users.update(target.id, patch))) throw userNotFound(target.id)
      if (loss === 'rights') await revokeUser(bus, target.id, tx)
      else if (loss === 'password') await revokeTokens(bus, target.id, patch.keepToken, tx)
    })
  } catch (error) {
    rethrowConflict(error)
  }
}

/**
 * @example
 * const users = createUserService(ctx)
 * const { id } = await users.create(principal, { login: 'alice', password: 'secret-1', role: 1 })
 */
export function createUserService (ctx: ServiceContext): UserService {
  const { store, bus } = ctx

  async function loadUser (id: number): Promise<UserRecord> {
    const user = await store.users.findById(id)
    if (user === undefined) throw userNotFound(id)
    return user
  }

  /** The user's networks, as far as the caller may see them (no other network leaks to a client). */
  async function view (principal: Principal, user: UserRecord): Promise<UserView> {
    const scope = linkScope(principal)
    const assigned = (await store.users.networkIds(user.id)).filter((id) => scopeAllowsNetwork(scope, id))
    const networks = assigned.length === 0 ? [] : await store.networks.list(assigned, {})
    return { ...toUserListView(user), networks: networks.map(toNamedEntityView) }
  }

  return {
    async list (principal, input) {
      requireAction(principal, Action.ManageUser)
      const page = parseListQuery(input, SORT_FIELDS, ctx.limits.maxTake)
      return (await store.users.list({ ...filterOf(principal, input), ...page })).map(toUserListView)
    },

    async count (principal, input) {
      requireAction(principal, Action.ManageUser)
      return { count: await store.users.count(filterOf(principal, input)) }
    },

    async get (principal, id) {
      requireAction(principal, Action.ManageUser)
      requireUserTarget(principal, id)
      return view(principal, await loadUser(id))
    },

    async current (principal) {
      requireAction(principal, Action.GetCurrentUser)
      const user = await store.users.findById(callerUser(principal).id)
      if (user === undefined) throw new DeviceHubError('CONFLICT', UserMessages.currentMissing)
      return view(principal, user)
    },

    async create (principal, body) {
      requireAction(principal, Action.ManageUser)
      const input = requireBody(body)
      const login = checkLogin(input.login)
      const role = checkRole(input.role)
      const status = input.status === undefined || input.status === null ? UserStatus.Active : checkStatus(input.status)
      // DeviceHive's order: the login is unique, then the password is valid.
      await refuseDuplicate(store, login)
      const password = checkPassword(input.password)
      const data = jsonObjectOrNull(input.data) ?? null
      const introReviewed = optionalBoolean(input.introReviewed) ?? false
      const allDeviceTypesAvailable = optionalBoolean(input.allDeviceTypesAvailable) ?? true
      // D1 last: only admins create admins. The field checks come first (as in DeviceHive), so a
      // client holding ManageUser hears what is wrong with the body, not a bare 403.
      if (role === UserRole.Administrator && !principal.isAdmin) throw forbidden()
      let id: number
      try {
        id = await store.users.insert({
          login, passwordHash: await hashPassword(password), role, status, data, introReviewed, allDeviceTypesAvailable
        })
      } catch (error) {
        rethrowConflict(error)
      }
      return { id, lastLogin: null, data, introReviewed, allDeviceTypesAvailable }
    },

    async update (principal, id, body) {
      requireAction(principal, Action.ManageUser)
      requireUserTarget(principal, id)
      await applyUpdate(ctx, principal, await loadUser(id), body)
    },

    async updateCurrent (principal, body) {
      requireAction(principal, Action.UpdateCurrentUser)
      const user = await store.users.findById(callerUser(principal).id)
      if (user === undefined) throw new DeviceHubError('CONFLICT', UserMessages.currentMissing)
      await applyUpdate(ctx, principal, user, body)
    },

    async delete (principal, id) {
      requireAction(principal, Action.ManageUser)
      if (callerId(principal) === id) throw forbidden(UserMessages.deleteSelf)
      requireUserTarget(principal, id)
      // Assignments and plugins go with the user (ON DELETE CASCADE, §8); user ids are never reused.
      await store.transaction(async (tx) => {
        const target = await tx.users.findById(id)
        if (target === undefined) throw userNotFound(id)
        await keepAnAdmin(tx, target, 'deleted')
        await tx.users.delete(id)
        await revokeUser(bus, id, tx)
      })
    },
    ...userLinks(ctx, loadUser)
  }
}

type LinkOperation = 'getNetwork' | 'assignNetwork' | 'unassignNetwork' | 'listDeviceTypes' | 'getDeviceType' |
  'assignDeviceType' | 'unassignDeviceType' | 'allowAllDeviceTypes' | 'disallowAllDeviceTypes'

/** The `/user/{id}/network/...` and `/user/{id}/devicetype/...` operations (assignments). */
function userLinks (ctx: ServiceContext, loadUser: (id: number) => Promise<UserRecord>): Pick<UserService, LinkOperation> {
  const { store, bus } = ctx

  /** Loads a network the caller may see, else the plain not-found text (D7). */
  async function loadNetwork (principal: Principal, networkId: number): Promise<NamedEntityView> {
    const row = scopeAllowsNetwork(linkScope(principal), networkId) ? await store.networks.findById(networkId) : undefined
    if (row === undefined) throw notFound(`Network with id = ${networkId} not found`)
    return toNamedEntityView(row)
  }

  async function loadDeviceType (principal: Principal, deviceTypeId: number): Promise<NamedEntityView> {
    const row = scopeAllowsDeviceType(linkScope(principal), deviceTypeId) ? await store.deviceTypes.findById(deviceTypeId) : undefined
    if (row === undefined) throw notFound(`Device type with id = ${deviceTypeId} not found`)
    return toNamedEntityView(row)
  }

  return {
    async getNetwork (principal, userId, networkId) {
      requireAction(principal, Action.GetNetwork)
      requireUserTarget(principal, userId)
      await loadUser(userId)
      const missing = notFound(`Network with id ${networkId} for user with id ${userId} was not found`)
      if (!scopeAllowsNetwork(linkScope(principal), networkId)) throw missing
      if (!(await store.users.networkIds(userId)).includes(networkId)) throw missing
      const network = await store.networks.findById(networkId)
      if (network === undefined) throw missing
      return { network: toNamedEntityView(network) }
    },

    async assignNetwork (principal, userId, networkId) {
      requireAction(principal, Action.ManageNetwork)
      requireUserTarget(principal, userId)
      await loadUser(userId)
      await loadNetwork(principal, networkId)
      // A new network takes nothing away: nothing is revoked.
      await store.users.assignNetwork(userId, networkId)
    },

    async unassignNetwork (principal, userId, networkId) {
      requireAction(principal, Action.ManageNetwork)
      requireUserTarget(principal, userId)
      await loadUser(userId)
      await loadNetwork(principal, networkId)
      await store.transaction(async (tx) => {
        // Only a client loses a network it had (an administrator's reach ignores assignments).
        const user = await tx.users.findById(userId)
        const had = user?.role === UserRole.Client && (await tx.users.networkIds(userId)).includes(networkId)
        await tx.users.unassignNetwork(userId, networkId)
        if (had) await revokeUser(bus, userId, tx)
      })
    },

    async listDeviceTypes (principal, userId) {
      requireAction(principal, Action.ManageDeviceType)
      requireUserTarget(principal, userId)
      const user = await loadUser(userId)
      const scope = linkScope(principal)
      let ids: 'all' | readonly number[]
      if (user.allDeviceTypesAvailable) ids = scope.deviceTypeIds
      else ids = (await store.users.deviceTypeIds(userId)).filter((id) => scopeAllowsDeviceType(scope, id))
      if (ids !== 'all' && ids.length === 0) return []
      return (await store.deviceTypes.list(ids, { take: ctx.limits.maxTake })).map(toNamedEntityView)
    },

    async getDeviceType (principal, userId, deviceTypeId) {
      requireAction(principal, Action.GetDeviceType)
      requireUserTarget(principal, userId)
      const user = await loadUser(userId)
      const missing = notFound(`Device type with id ${deviceTypeId} for user with id ${userId} not found`)
      if (!scopeAllowsDeviceType(linkScope(principal), deviceTypeId)) throw missing
      if (!user.allDeviceTypesAvailable && !(await store.users.deviceTypeIds(userId)).includes(deviceTypeId)) throw missing
      const deviceType = await store.deviceTypes.findById(deviceTypeId)
      if (deviceType === undefined) throw missing
      return { deviceType: toNamedEntityView(deviceType) }
    },

    async assignDeviceType (principal, userId, deviceTypeId) {
      requireAction(principal, Action.ManageDeviceType)
      requireUserTarget(principal, userId)
      const user = await loadUser(userId)
      if (user.allDeviceTypesAvailable) throw forbidden(UserMessages.allDeviceTypes)
      await loadDeviceType(principal, deviceTypeId)
      // A new device type takes nothing away: nothing is revoked.
      await store.users.assignDeviceType(userId, deviceTypeId)
    },

    async unassignDeviceType (principal, userId, deviceTypeId) {
      requireAction(principal, Action.ManageDeviceType)
      requireUserTarget(principal, userId)
      const user = await loadUser(userId)
      if (user.allDeviceTypesAvailable) throw forbidden(UserMessages.allDeviceTypes)
      await loadDeviceType(principal, deviceTypeId)
      await store.transaction(async (tx) => {
        const had = user.role === UserRole.Client && (await tx.users.deviceTypeIds(userId)).includes(deviceTypeId)
        await tx.users.unassignDeviceType(userId, deviceTypeId)
        if (had) await revokeUser(bus, userId, tx)
      })
    },

    async allowAllDeviceTypes (principal, userId) {
      requireAction(principal, Action.ManageDeviceType)
      requireUserTarget(principal, userId)
      await loadUser(userId)
      // Like D1: no client grants more device types than it holds itself (an administrator may).
      if (linkScope(principal).deviceTypeIds !== 'all') throw forbidden()
      // Every device type instead of some: a gain, nothing is revoked.
      await store.transaction(async (tx) => {
        await tx.users.update(userId, { allDeviceTypesAvailable: true })
        await tx.users.unassignAllDeviceTypes(userId)
      })
    },

    async disallowAllDeviceTypes (principal, userId) {
      requireAction(principal, Action.ManageDeviceType)
      requireUserTarget(principal, userId)
      await loadUser(userId)
      // The same scope rule as the grant: only a caller holding every device type changes it.
      if (linkScope(principal).deviceTypeIds !== 'all') throw forbidden()
      await store.transaction(async (tx) => {
        const user = await tx.users.findById(userId)
        if (user === undefined) throw userNotFound(userId)
        // A loss when the flag gave every device type (it overrides a token's `dt`, admins'
        // included), or when a client had device types assigned (they are removed too).
        const had = user.allDeviceTypesAvailable || (user.role === UserRole.Client && (await tx.users.deviceTypeIds(userId)).length > 0)
        await tx.users.update(userId, { allDeviceTypesAvailable: false })
        await tx.users.unassignAllDeviceTypes(userId)
        if (had) await revokeUser(bus, userId, tx)
      })
    }
  }
}
