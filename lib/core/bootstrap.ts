/**
 * First-start data (D3, D4, R1): the JWT secret, the admin (id 1), network 1 and device type 1.
 * Idempotent: a marker in the internal table records that it ran, inside the same transaction.
 */
import { generatePassword, generateSecret, hashPassword } from './auth/passwords.js'
import { isDeviceHubError } from './errors.js'
import type { Store } from './ports.js'
import { UserRole, UserStatus } from './users/user-ports.js'

export interface BootstrapOptions {
  adminLogin?: string
  /** The admin password; generated when absent and returned once. */
  adminPassword?: string
}

export interface BootstrapResult {
  /** True on the start that created the initial data. */
  created: boolean
  adminLogin: string
  /** Set only when the password was generated here: show it once, never store it in clear. */
  generatedPassword?: string
}

const MARKER = 'bootstrap.completed'
const JWT_SECRET = 'jwt.secret'

/**
 * Throws when the admin's login or password cannot be used; `createDeviceHub` calls it at once,
 * so a bad password is refused before a server listens, not when a deferred bootstrap runs.
 */
export function checkBootstrapOptions (options: BootstrapOptions = {}): string {
  const adminLogin = (options.adminLogin ?? 'dhadmin').trim()
  if (adminLogin.length < 3 || adminLogin.length > 128) {
    throw new Error('The admin login must have 3 to 128 characters')
  }
  if (options.adminPassword !== undefined && (options.adminPassword.length < 6 || options.adminPassword.length > 128)) {
    throw new Error('The admin password must have 6 to 128 characters')
  }
  return adminLogin
}

export async function ensureInitialData (store: Store, options: BootstrapOptions = {}): Promise<BootstrapResult> {
  const adminLogin = checkBootstrapOptions(options)
  if ((await store.secrets.get(MARKER)) !== undefined) return { created: false, adminLogin }
  const password = options.adminPassword ?? generatePassword()
  const passwordHash = await hashPassword(password)
  const created = await store.transaction(async (tx): Promise<boolean> => {
    if ((await tx.secrets.get(MARKER)) !== undefined) return false
    const adminId = await tx.users.insert({
      login: adminLogin,
      passwordHash,
      role: UserRole.Administrator,
      status: UserStatus.Active,
      data: null,
      introReviewed: false,
      allDeviceTypesAvailable: true
    })
    const networkId = await tx.networks.insert({ name: 'Sample Network', description: 'A DeviceHive Sample Network' })
    const deviceTypeId = await tx.deviceTypes.insert({ name: 'Default Device Type', description: 'Default DeviceHive device type' })
    await tx.users.assignNetwork(adminId, networkId)
    await tx.users.assignDeviceType(adminId, deviceTypeId)
    await tx.secrets.set(MARKER, new Date().toISOString())
    return true
  }).catch(async (error: unknown) => {
    // Two instances starting together on one empty PostgreSQL database: the loser of the race
    // hits a unique constraint; the winner's data is there, so this start created nothing.
    if (isDeviceHubError(error) && error.code === 'CONFLICT' && (await store.secrets.get(MARKER)) !== undefined) return false
    throw error
  })
  if (!created) return { created: false, adminLogin }
  return options.adminPassword === undefined
    ? { created: true, adminLogin, generatedPassword: password }
    : { created: true, adminLogin }
}

/**
 * The JWT secret (D3): the configured one, else the stored one, else a generated one that is
 * stored for the next start.
 */
export async function resolveJwtSecret (store: Store, configured?: string): Promise<string> {
  if (configured !== undefined && configured !== '') return configured
  return store.secrets.setIfAbsent(JWT_SECRET, generateSecret())
}
