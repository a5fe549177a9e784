import type { JsonObject, Page } from '../values.js'

export const UserRole = { Administrator: 0, Client: 1 } as const
export type UserRole = (typeof UserRole)[keyof typeof UserRole]

export const UserStatus = { Active: 0, LockedOut: 1, Disabled: 2 } as const
export type UserStatus = (typeof UserStatus)[keyof typeof UserStatus]

/** A stored user. `passwordHash` never leaves the core. */
export interface UserRecord {
  id: number
  login: string
  passwordHash: string
  role: UserRole
  status: UserStatus
  loginAttempts: number
  lastLogin: number | null
  data: JsonObject | null
  introReviewed: boolean
  allDeviceTypesAvailable: boolean
  /**
   * Incremented by the store when the user loses rights or its password changes: role lowered
   * (administrator to client), status leaving ACTIVE, a new password. A token issued under an
   * older version is refused (claim `v`, absent = 0), except the one {@link keptToken} names.
   */
  tokenVersion: number
  /**
   * The id (auth/token-id.ts) of the one token the last increment spared: the token that changed
   * its own user's password (D11). Absent when none; cleared by the next increment.
   */
  keptToken?: string
}

export type NewUser = Omit<UserRecord, 'id' | 'loginAttempts' | 'lastLogin' | 'tokenVersion' | 'keptToken'>

/**
 * A lowered role, a status leaving ACTIVE or a new password also increment `tokenVersion` (the
 * store does it, against the row as it was); a raised role or a return to ACTIVE does not.
 */
export type UserPatch = Partial<Omit<UserRecord, 'id' | 'tokenVersion' | 'keptToken'>> & {
  /** A rehash of the same password (legacy hash upgrade): replaces the hash, revokes nothing. */
  passwordRehash?: string
  /** The token id the increment of this patch spares (a password change by the token's own user). */
  keepToken?: string
}

export interface UserFilter extends Page {
  /** Only this user (a client's list and count show its own account alone). */
  id?: number
  login?: string
  loginPattern?: string
  role?: number
  status?: number
  sortField?: 'id' | 'login'
}

export interface UserRepository {
  findById(id: number): Promise<UserRecord | undefined>
  findByLogin(login: string): Promise<UserRecord | undefined>
  insert(user: NewUser): Promise<number>
  update(id: number, patch: UserPatch): Promise<boolean>
  delete(id: number): Promise<boolean>
  list(filter: UserFilter): Promise<UserRecord[]>
  count(filter: UserFilter): Promise<number>
  /** Active administrators other than `exceptId` (the last-admin rule). */
  countActiveAdmins(exceptId: number): Promise<number>
  /** Ids of the networks the user is assigned to, ascending. */
  networkIds(userId: number): Promise<number[]>
  /** Ids of the device types individually assigned to the user, ascending. */
  deviceTypeIds(userId: number): Promise<number[]>
  assignNetwork(userId: number, networkId: number): Promise<void>
  unassignNetwork(userId: number, networkId: number): Promise<void>
  assignDeviceType(userId: number, deviceTypeId: number): Promise<void>
  unassignDeviceType(userId: number, deviceTypeId: number): Promise<void>
  unassignAllDeviceTypes(userId: number): Promise<void>
  /** Clients assigned to the network, ascending: whose rights its deletion takes away. */
  clientsOfNetwork(networkId: number): Promise<number[]>
  /**
   * Clients to whom the device type is assigned individually (not through the all-device-types
   * flag), ascending: whose rights its deletion takes away.
   */
  clientsOfDeviceType(deviceTypeId: number): Promise<number[]>
}
