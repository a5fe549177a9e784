/**
 * Presence storage: one row per device that was ever seen, apart from the devices table so a
 * presence write never touches (or invalidates the read cache of) the device itself.
 */

/** What a {@link PresenceRepository.markOnline} call found before it marked the device online. */
export type OnlineTransition =
  /** The device was already online (fresh and announced); only `lastSeen` moved. */
  | 'none'
  /** The device was offline (never seen, or announced offline): it comes online now. */
  | 'came-online'
  /** Still announced online, but its `lastSeen` had expired before a sweep noticed. */
  | 'expired'

export interface PresenceRepository {
  /**
   * The hot path: moves `lastSeen` forward to `now` for each device that is announced online
   * and was seen at or after `freshSince`; answers the ids it refreshed. A device left out was
   * not (the caller then runs {@link markOnline} in a transaction). One statement for a list
   * (the heartbeat of every open connection), not one per device.
   *
   * @example
   * const refreshed = await store.presence.refresh(['d-1', 'd-2'], now, now - windowMs)
   */
  refresh(deviceIds: readonly string[], now: number, freshSince: number): Promise<Set<string>>
  /**
   * Sets `lastSeen = now` and announces the device online; says what it was before. Two
   * instances racing on one device: exactly one of them sees the transition.
   */
  markOnline(deviceId: string, now: number, freshSince: number): Promise<OnlineTransition>
  /** Ids of devices announced online whose `lastSeen` is before `freshSince` (oldest first). */
  listExpired(freshSince: number, limit: number): Promise<string[]>
  /** Announces the device offline if it is still expired; true when this call did it. */
  markOffline(deviceId: string, freshSince: number): Promise<boolean>
  /** `lastSeen` (epoch ms) of the given devices that were ever seen. */
  lastSeen(deviceIds: readonly string[]): Promise<Map<string, number>>
}
