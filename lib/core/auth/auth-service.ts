/**
 * Tokens and authentication (auth spec §1.7, §2.1-§2.3, D1): login, `/token/create`,
 * `/token/refresh`, and turning a bearer token into a {@link Principal}.
 */
import { DeviceHubError, Messages, badRequest, forbidden, notFound, unauthorized } from '../errors.js'
import type { Store } from '../ports.js'
import type { Bus } from '../realtime/bus.js'
import type { Clock } from '../time.js'
import { parseTimestamp } from '../time.js'
import type { UserPatch, UserRecord } from '../users/user-ports.js'
import { UserRole, UserStatus } from '../users/user-ports.js'
import type { Action } from './actions.js'
import { Action as A, CLIENT_ACTIONS, expandActions, parseAction } from './actions.js'
import type { AccessTokenView, TokenPair } from './auth-schemas.js'
import type { JwtCodec, PluginTokenPayload, TokenPayload, TokenType as TokenTypeValue, UserTokenPayload } from './jwt.js'
import { TokenRejectedError, TokenType, isUserPayload } from './jwt.js'
import type { GuessingAlert } from './guessing-watch.js'
import type { LoginThrottle } from './login-throttle.js'
import { createLoginThrottle } from './login-throttle.js'
import { hashPassword, verifyPassword } from './passwords.js'
import type { Assignments, Principal, UserPrincipal } from './principal.js'
import { createPluginPrincipal, createUserPrincipal, grantsAll } from './principal.js'
import { requireAction } from './permissions.js'
import { revokeUser } from './revocations.js'
import { tokenId } from './token-id.js'

export interface TokenLifetimes {
  /** Access token lifetime in ms (default 30 minutes). */
  accessMs: number
  /** Refresh token lifetime in ms (default 182 days). */
  refreshMs: number
}

export const DEFAULT_TOKEN_LIFETIMES: TokenLifetimes = {
  accessMs: 30 * 60 * 1000,
  refreshMs: 182 * 24 * 60 * 60 * 1000
}

export type { AccessTokenView, TokenPair } from './auth-schemas.js'

/** Body of `POST /token/create` after schema validation. */
export interface TokenCreateRequest {
  userId?: number
  actions?: unknown
  networkIds?: unknown
  deviceTypeIds?: unknown
  expiration?: unknown
  refreshExpiration?: unknown
}

/** Login outcomes an operator watches (the HTTP adapter turns them into metrics). */
export interface LoginStats {
  /** Refused logins since start: wrong password or unknown login (401), held back (429), right password of a locked or disabled user. */
  readonly failures: { readonly invalid: number, readonly throttled: number, readonly inactive: number }
  /** Distributed-guessing alerts raised since start. */
  readonly guessingAlerts: number
  /** Logins whose failures came from many client addresses within the last window. */
  readonly loginsUnderGuessing: number
}

/** Why an access token failed (§1.7); REST and WebSocket word these differently. */
export type AuthFailure = 'invalid' | 'type' | 'expired' | 'subject'

export interface AuthService {
  /**
   * `POST /token` and the WebSocket `token` action: login and password to a token pair. Failed
   * attempts are throttled per `client.address` and per login from that address (429 with a
   * retry delay while held back); attempts without an address share one.
   */
  login(login: unknown, password: unknown, client?: { address?: string }): Promise<TokenPair>
  /** Counters of refused logins and distributed guessing. */
  readonly loginStats: LoginStats
  /**
   * Calls `listener` with each distributed-guessing alert (many addresses failing one login);
   * returns the function that stops it. The HTTP adapter logs them as warnings.
   *
   * @example
   * const stop = hub.tokens.watchGuessing((alert) => log.warn({ login: alert.login }, 'distributed login guessing'))
   */
  watchGuessing(listener: (alert: GuessingAlert) => void): () => void
  /** `POST /token/create` (ManageToken; D1 limits non-admin callers). */
  createTokens(principal: Principal | undefined, request: TokenCreateRequest | undefined): Promise<TokenPair>
  /** `POST /token/refresh`: a new access token from a refresh token. */
  refresh(refreshToken: unknown): Promise<AccessTokenView>
  /** Resolves an access token to a principal, or the reason it fails. */
  verifyAccessToken(token: string): Promise<{ principal: Principal } | { failure: AuthFailure }>
  /**
   * A session authenticated with a token (WebSocket `authenticate`, auth spec §6.3): refreshes the
   * user's `lastLogin` with the login rule (§2.1). Plugin tokens have no user to touch.
   */
  noteSessionLogin(principal: Principal): Promise<void>
  /**
   * Whether what `principal` was built from (its user, that user's assignments, its plugin and
   * owner, as stored now) still grants everything it granted: false where a `revoke` would have
   * ended its waits (rights lost, its token revoked), never for an expiry alone. A stream asks
   * after a `resync`, whose lost events may have held that `revoke`.
   *
   * @example
   * if (!(await hub.tokens.rightsHeld(principal))) stream.close()
   */
  rightsHeld(principal: Principal): Promise<boolean>
  /** REST bearer authentication: resolves or throws 401 with the REST message. */
  authenticate(token: string): Promise<Principal>
  /** Issues a token pair with the default claims of a login, without a password (CLI, test rigs). */
  issueForUser(userId: number): Promise<TokenPair>
  /**
   * A plugin token pair for `tpc` carrying `a` (auth spec §2.4, §2.7): both tokens expire at
   * `e` when given, else after the default access and refresh lifetimes.
   */
  issuePluginTokens(tpc: string, a: number[] | null, e?: number): TokenPair
  /** Signs a payload with this server's key (plugins reuse it). */
  sign(payload: TokenPayload): string
  decode(token: string): TokenPayload
}

export interface AuthServiceOptions {
  store: Store
  jwt: JwtCodec
  clock: Clock
  lifetimes: TokenLifetimes
  /** Defaults to {@link createLoginThrottle} with its defaults. */
  throttle?: LoginThrottle
  /**
   * Rings `revoke` when the lockout policy locks a user (its status leaves ACTIVE, D11), so its
   * open waits end on every instance. Without it a lock revokes the tokens only.
   */
  bus?: Bus
}

const DEFAULT_LAST_LOGIN_TIMEOUT_MS = 1000
const INVALID_CREDENTIALS = 'Invalid credentials'
/** DeviceHive's words for a token request without a user id (its bean validation message). */
const NULL_USER_ID = 'Error! Make sure, that the passed object is correct and properly structured. Validation failed: ' +
  '\nOn property userId (value: null): must not be null ; '
// Verified against when the login is unknown, so both answers take the same time.
const DUMMY_HASH = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA='

export function createAuthService ({ store, jwt, clock, lifetimes, throttle: givenThrottle, bus }: AuthServiceOptions): AuthService {
  const throttle = givenThrottle ?? createLoginThrottle({ clock })
  const failures = { invalid: 0, throttled: 0, inactive: 0 }
  const guessingListeners = new Set<(alert: GuessingAlert) => void>()
  const loginStats: LoginStats = {
    failures,
    get guessingAlerts () {
      return throttle.guessing.alerts
    },
    get loginsUnderGuessing () {
      return throttle.guessing.loginsUnderGuessing
    }
  }

  function raise (alert: GuessingAlert): void {
    for (const listener of guessingListeners) {
      try {
        listener(alert)
      } catch {
        // A listener's fault never turns a 401 into a 500.
      }
    }
  }

  const { lockAfter, touchLastLogin, loginClaims, pair, verifyAccessToken, rightsHeld } = createTokenChecks({ store, jwt, clock })
  return {
    sign: (payload) => jwt.sign(payload),
    issuePluginTokens (tpc, a, e) {
      const now = clock.now()
      return {
        accessToken: jwt.sign({ tpc, a, e: e ?? now + lifetimes.accessMs, t: TokenType.Access }),
        refreshToken: jwt.sign({ tpc, a, e: e ?? now + lifetimes.refreshMs, t: TokenType.Refresh })
      }
    },
    decode: (token) => jwt.decode(token),
    verifyAccessToken, rightsHeld,
    loginStats,
    watchGuessing (listener) {
      const own = (alert: GuessingAlert): void => listener(alert)
      guessingListeners.add(own)
      return () => guessingListeners.delete(own)
    },

    async noteSessionLogin (principal) {
      if (principal.kind === 'user') await touchLastLogin(principal.user)
    },

    authenticate (token) {
      // Every REST request with a token passes here: one promise, not an async wrapper around one.
      return verifyAccessToken(token).then((result) => {
        if ('principal' in result) return result.principal
        throw unauthorized(result.failure === 'expired' ? 'Token expired' : Messages.unauthorized)
      })
    },

    async login (login, password, client) {
      if (typeof password === 'number') password = String(password)
      if (typeof login !== 'string' || login.trim() === '' || typeof password !== 'string' || password === '') {
        throw badRequest('Invalid or empty authorization request parameters')
      }
      const name = login.trim()
      const address = client?.address
      const wait = throttle.attempt(name, address)
      if (wait > 0) {
        failures.throttled++
        const seconds = Math.ceil(wait / 1000)
        const message = `Too many failed login attempts. Retry in ${seconds} s`
        throw new DeviceHubError('TOO_MANY_REQUESTS', message, { retryAfterSeconds: seconds })
      }
      const user = await store.users.findByLogin(name)
      // The same work and the same answer whether the login exists or the password is wrong.
      const check = await verifyPassword(password, user?.passwordHash ?? DUMMY_HASH)
      if (user === undefined || !check.ok) {
        failures.invalid++
        const alert = throttle.failed(name, address)
        if (alert !== undefined) raise(alert)
        // Only failures that got past the throttle reach this counter.
        if (user !== undefined) await countFailedAttempt(store, bus, user, await lockAfter())
        throw unauthorized(INVALID_CREDENTIALS)
      }
      throttle.succeeded(name, address)
      // Only someone who knows the password learns the account's status.
      if (user.status !== UserStatus.Active) {
        failures.inactive++
        throw unauthorized('User is locked or disabled')
      }
      const extra: UserPatch = {}
      if (user.loginAttempts !== 0) extra.loginAttempts = 0
      // The same password rehashed: no token is revoked by it.
      if (check.needsUpgrade) extra.passwordRehash = await hashPassword(password)
      await touchLastLogin(user, extra)
      const now = clock.now()
      return pair(await loginClaims(user), now + lifetimes.accessMs, now + lifetimes.refreshMs)
    },

    async createTokens (principal, request) {
      requireAction(principal, A.ManageToken)
      // A plugin token never mints user tokens, whatever actions its owner gave it.
      if (principal.kind === 'plugin') throw forbidden()
      if (request === undefined) throw badRequest(Messages.objectIsNull)
      const userId = request.userId
      if (typeof userId !== 'number' || !Number.isSafeInteger(userId)) {
        throw badRequest(NULL_USER_ID)
      }
      const actions = parseActionList(request.actions)
      const n = parseIdClaim(request.networkIds)
      const dt = parseIdClaim(request.deviceTypeIds)
      const expiration = parseExpiration(request.expiration)
      const refreshExpiration = parseExpiration(request.refreshExpiration)
      const now = clock.now()
      let accessE = expiration ?? now + lifetimes.accessMs
      let refreshE = refreshExpiration ?? expiration ?? now + lifetimes.refreshMs

      if (!principal.isAdmin) {
        // D1: a non-admin mints only for itself and only within what it holds.
        if (principal.kind !== 'user' || principal.user.id !== userId) throw forbidden()
        const requested = expandActions(actions)
        for (const action of requested) if (!principal.actions.has(action)) throw forbidden()
        if (!withinGrant(n, principal.networkGrant) || !withinGrant(dt, principal.deviceTypeGrant)) throw forbidden()
        const ceiling = principal.token.e
        if ((expiration !== undefined && expiration > ceiling) || (refreshExpiration !== undefined && refreshExpiration > ceiling)) {
          throw forbidden()
        }
        accessE = Math.min(accessE, ceiling)
        refreshE = Math.min(refreshE, ceiling)
      }

      const user = await store.users.findById(userId)
      if (user === undefined) throw notFound(`User with id = ${userId} not found`)
      if (user.status !== UserStatus.Active) throw forbidden('User is locked or disabled')
      return pair({ u: userId, a: actions, n, dt, v: user.tokenVersion }, accessE, refreshE)
    },

    async refresh (refreshToken) {
      if (typeof refreshToken !== 'string' || refreshToken === '') throw badRequest('Missing or invalid payload in request')
      let payload: TokenPayload
      try {
        payload = jwt.decode(refreshToken)
      } catch (error) {
        if (error instanceof TokenRejectedError) throw unauthorized()
        throw error
      }
      if (payload.t !== TokenType.Refresh) throw unauthorized('Invalid token type')
      if (payload.e < clock.now()) throw unauthorized('Token has expired')
      const e = clock.now() + lifetimes.accessMs
      if (isUserPayload(payload)) {
        const user = await store.users.findById(payload.u)
        if (user === undefined || user.status !== UserStatus.Active) throw unauthorized()
        // Issued before a lowered role, a status leaving ACTIVE or a new password: revoked, so a
        // refresh never carries claims the user no longer holds (network claims are intersected
        // with the assignments on every request). A password change spares only the access
        // token that made it, never a refresh token: a refresh token mints nothing after it.
        if ((payload.v ?? 0) !== user.tokenVersion) throw unauthorized()
        await touchLastLogin(user)
        return { accessToken: jwt.sign(userPayload(payload, e, TokenType.Access)) }
      }
      if (payload.tpc === '') throw unauthorized('No permisions or invalid topic name')
      const plugin = await store.plugins.findByTopic(payload.tpc)
      if (plugin === undefined) throw unauthorized('Plugin is not found')
      const access: PluginTokenPayload = { tpc: payload.tpc, a: payload.a, e, t: TokenType.Access }
      return { accessToken: jwt.sign(access) }
    },

    async issueForUser (userId) {
      const user = await store.users.findById(userId)
      if (user === undefined) throw notFound(`User with id = ${userId} not found`)
      if (user.status !== UserStatus.Active) throw forbidden('User is locked or disabled')
      const now = clock.now()
      return pair(await loginClaims(user), now + lifetimes.accessMs, now + lifetimes.refreshMs)
    }
  }
}

/** One more failed password for `user`; at `limit` (when set) the account is locked and its tokens revoked. */
async function countFailedAttempt (store: Store, bus: Bus | undefined, user: UserRecord, limit: number | undefined): Promise<void> {
  const attempts = user.loginAttempts + 1
  // The policy never locks out the last active administrator.
  const lock = limit !== undefined && attempts >= limit && user.status === UserStatus.Active &&
    (user.role !== UserRole.Administrator || (await store.users.countActiveAdmins(user.id)) > 0)
  if (lock) {
    await store.transaction(async (tx) => {
      await tx.users.update(user.id, { loginAttempts: 0, status: UserStatus.LockedOut })
      if (bus !== undefined) await revokeUser(bus, user.id, tx)
    })
  } else {
    await store.users.update(user.id, { loginAttempts: attempts })
  }
}

/** The store-backed steps of the service: settings, claims, token pairs, access-token checks. */
function createTokenChecks ({ store, jwt, clock }: Pick<AuthServiceOptions, 'store' | 'jwt' | 'clock'>) {
  /** The LOCKED policy: only when an operator set `user.login.maxAttempts` explicitly (> 0). */
  async function lockAfter (): Promise<number | undefined> {
    const row = await store.configuration.get('user.login.maxAttempts')
    const value = row === undefined ? NaN : Number(row.value)
    return Number.isSafeInteger(value) && value > 0 ? value : undefined
  }

  async function numericSetting (name: string, fallback: number): Promise<number> {
    const row = await store.configuration.get(name)
    const value = row === undefined ? NaN : Number(row.value)
    return Number.isFinite(value) && value >= 0 ? value : fallback
  }

  async function touchLastLogin (user: UserRecord, extra: UserPatch = {}): Promise<void> {
    const timeout = await numericSetting('user.login.lastTimeout', DEFAULT_LAST_LOGIN_TIMEOUT_MS)
    const now = clock.now()
    const patch: UserPatch = { ...extra }
    if (user.lastLogin === null || user.lastLogin < now - timeout) patch.lastLogin = now
    if (Object.keys(patch).length > 0) await store.users.update(user.id, patch)
  }

  async function loginClaims (user: UserRecord): Promise<Claims> {
    if (user.role === UserRole.Administrator) return { u: user.id, a: [A.Any], n: ['*'], dt: ['*'], v: user.tokenVersion }
    const networks = await store.users.networkIds(user.id)
    const deviceTypes = user.allDeviceTypesAvailable ? ['*'] : (await store.users.deviceTypeIds(user.id)).map(String)
    return { u: user.id, a: [...CLIENT_ACTIONS], n: networks.map(String), dt: deviceTypes, v: user.tokenVersion }
  }

  function pair (claims: Claims, accessE: number, refreshE: number): TokenPair {
    return {
      accessToken: jwt.sign(userPayload(claims, accessE, TokenType.Access)),
      refreshToken: jwt.sign(userPayload(claims, refreshE, TokenType.Refresh))
    }
  }

  /**
   * The assignments the principal needs: none to read for an administrator with every device
   * type (the usual administrator), answered without a promise; else read from the store.
   */
  function assignmentsOf (user: UserRecord): Assignments | Promise<Assignments> {
    const admin = user.role === UserRole.Administrator
    if (admin && user.allDeviceTypesAvailable) return { networkIds: [], deviceTypeIds: [] }
    return readAssignments(user, admin)
  }

  async function readAssignments (user: UserRecord, admin: boolean): Promise<Assignments> {
    return {
      networkIds: admin ? [] : await store.users.networkIds(user.id),
      deviceTypeIds: user.allDeviceTypesAvailable ? [] : await store.users.deviceTypeIds(user.id)
    }
  }

  // The principal of a token is rebuilt only when what it is built from changed: the same token
  // string with an equal user and equal assignments gets the object of its last request (a
  // principal is never modified), so parked polls of one token share one.
  const principals = new Map<string, RememberedPrincipal>()

  function userPrincipal (token: string, payload: UserTokenPayload, user: UserRecord, assignments: Assignments): UserPrincipal {
    const known = principals.get(token)
    if (known !== undefined && sameUser(known.principal.user, user) &&
      sameIds(known.assignments.networkIds, assignments.networkIds) &&
      sameIds(known.assignments.deviceTypeIds, assignments.deviceTypeIds)) {
      return known.principal
    }
    const principal = createUserPrincipal(user, payload, assignments)
    if (principals.size >= REMEMBERED_PRINCIPALS) principals.clear()
    principals.set(token, { principal, assignments })
    return principal
  }

  // Every request with a token passes here: no async wrapper around principalOf's promise.
  function verifyAccessToken (token: string): Promise<{ principal: Principal } | { failure: AuthFailure }> {
    let payload: TokenPayload
    try {
      payload = jwt.decode(token)
    } catch (error) {
      if (error instanceof TokenRejectedError) return Promise.resolve({ failure: 'invalid' })
      return Promise.reject(error)
    }
    if (payload.t !== TokenType.Access) return Promise.resolve({ failure: 'type' })
    if (payload.e < clock.now()) return Promise.resolve({ failure: 'expired' })
    return principalOf(payload, token).then((principal) => principal === undefined ? { failure: 'subject' } : { principal })
  }

  /**
   * The principal of a verified access-token payload from what is stored now; undefined where
   * its subject is gone, not active, or its token revoked. `token` (the string) shares the
   * object between the requests of one token.
   */
  async function principalOf (payload: TokenPayload, token?: string): Promise<Principal | undefined> {
    if (isUserPayload(payload)) {
      const user = await store.users.findById(payload.u)
      if (user === undefined || user.status !== UserStatus.Active) return undefined
      // Issued before a lowered role, a status leaving ACTIVE or a new password: revoked, but
      // for the one token that changed its own user's password (D11).
      if ((payload.v ?? 0) !== user.tokenVersion && (user.keptToken === undefined || user.keptToken !== tokenId(payload))) {
        return undefined
      }
      const pending = assignmentsOf(user)
      const assignments = pending instanceof Promise ? await pending : pending
      return token === undefined ? createUserPrincipal(user, payload, assignments) : userPrincipal(token, payload, user, assignments)
    }
    if (payload.tpc === '') return undefined
    const plugin = await store.plugins.findByTopic(payload.tpc)
    if (plugin === undefined) return undefined
    const owner = await store.users.findById(plugin.userId)
    if (owner === undefined || owner.status !== UserStatus.Active) return undefined
    return createPluginPrincipal(plugin, owner, payload, await assignmentsOf(owner))
  }

  // Fresh rows: the hub drops the read cache at every resync before any stream hears it
  // (devicehub.ts), so a change another instance made while this one's bus was down is seen.
  async function rightsHeld (principal: Principal): Promise<boolean> {
    if (principal.kind === 'system') return true
    const now = await principalOf(principal.token)
    return now !== undefined && grantsAll(now, principal)
  }

  return { lockAfter, touchLastLogin, loginClaims, pair, verifyAccessToken, rightsHeld }
}

const REMEMBERED_PRINCIPALS = 1000

type Claims = Pick<UserTokenPayload, 'u' | 'a' | 'n' | 'dt' | 'v'>

/** DeviceHive's key order; `v` only when not 0, so such tokens stay byte-identical to DeviceHive's. */
function userPayload (claims: Claims, e: number, t: TokenTypeValue): UserTokenPayload {
  const payload: UserTokenPayload = { u: claims.u, a: claims.a, n: claims.n, dt: claims.dt, e, t }
  if (claims.v !== undefined && claims.v !== 0) payload.v = claims.v
  return payload
}

interface RememberedPrincipal {
  principal: UserPrincipal
  assignments: Assignments
}

function sameIds (a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/** Every field of the stored user, `data` by its JSON text (key order is part of the view). */
function sameUser (a: UserRecord, b: UserRecord): boolean {
  return a.id === b.id && a.login === b.login && a.passwordHash === b.passwordHash && a.role === b.role &&
    a.status === b.status && a.loginAttempts === b.loginAttempts && a.lastLogin === b.lastLogin &&
    a.introReviewed === b.introReviewed && a.allDeviceTypesAvailable === b.allDeviceTypesAvailable && a.tokenVersion === b.tokenVersion &&
    a.keptToken === b.keptToken &&
    (a.data === b.data || JSON.stringify(a.data) === JSON.stringify(b.data))
}

export const ACTIONS_MESSAGE = 'Actions list should contain only Strings or Integers'

function parseActionList (value: unknown): number[] | null {
  if (value === undefined || value === null) return [A.None]
  if (!Array.isArray(value)) throw badRequest(ACTIONS_MESSAGE)
  const ids: Action[] = []
  for (const item of value) {
    if (typeof item === 'string' || (typeof item === 'number' && Number.isInteger(item))) {
      const id = parseAction(item)
      if (id !== undefined && !ids.includes(id)) ids.push(id)
    } else {
      throw badRequest(ACTIONS_MESSAGE)
    }
  }
  return ids
}

function parseIdClaim (value: unknown): string[] | null {
  if (value === undefined || value === null) return null
  if (!Array.isArray(value)) throw badRequest()
  return value.map((item) => {
    const text = typeof item === 'number' ? String(item) : item
    if (typeof text !== 'string' || (text !== '*' && !/^\d+$/.test(text))) throw badRequest()
    return text
  })
}

function parseExpiration (value: unknown): number | undefined {
  const ms = parseTimestamp(value)
  if (ms === null) throw badRequest()
  return ms
}

/** Whether a requested `n`/`dt` claim stays within what the caller's token grants (D1). */
function withinGrant (requested: string[] | null, held: 'all' | readonly number[]): boolean {
  if (requested === null || held === 'all') return true
  return requested.every((id) => id !== '*' && held.includes(Number(id)))
}
