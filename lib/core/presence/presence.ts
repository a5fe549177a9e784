/** Device presence as the services see it (the implementation: presence-service.ts). */
export interface PresenceSettings {
  /** A device seen within this window (ms) is online (default 60 s, at least 1 s). */
  windowMs: number
  /** Send `$device-online` / `$device-offline` notifications (default false). */
  notifications: boolean
}

export const DEFAULT_PRESENCE: PresenceSettings = { windowMs: 60_000, notifications: false }

export interface DevicePresence {
  /** Epoch ms of the last device-authored activity, or null when never seen. */
  lastSeen: number | null
  online: boolean
}

export interface Presence {
  readonly settings: Readonly<PresenceSettings>
  /**
   * Records device-authored activity. Throttled per device; never rejects (a failed write is
   * logged: presence must not fail the request that carried it).
   *
   * @example
   * await hub.presence.seen('sensor-1')
   */
  seen(deviceId: string): Promise<void>
  /**
   * A real-time connection (WebSocket subscription, SSE stream) acting for one device opened
   * on this instance; call the returned function when it closes. The device is online while
   * at least one is open (refreshed every heartbeat, so other instances see it too).
   *
   * @example
   * const closed = hub.presence.connectionOpened(deviceId)
   * socket.on('close', closed)
   */
  connectionOpened(deviceId: string): () => void
  /** `lastSeen` and `online` of each device id given (absent ones never seen: null / offline unless connected here). */
  describe(deviceIds: readonly string[]): Promise<Map<string, DevicePresence>>
  /** The earliest `lastSeen` that still counts as online now. */
  freshSince(): number
  /** Announces offline the devices whose window expired (with `notifications`); returns how many. */
  sweep(): Promise<number>
  /** Starts the heartbeat of open connections and, with `notifications`, the offline sweep. */
  start(): void
  /** Stops the timers and waits for presence writes in flight. */
  stop(): Promise<void>
}
