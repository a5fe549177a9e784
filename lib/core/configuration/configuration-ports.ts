export interface ConfigurationRecord {
  name: string
  value: string
  entityVersion: number
}

/** The user-visible key/value configuration (spec §4). */
export interface ConfigurationRepository {
  get(name: string): Promise<ConfigurationRecord | undefined>
  /** Creates the row (`entityVersion` 0) or replaces its value and bumps the version. */
  put(name: string, value: string): Promise<ConfigurationRecord>
  delete(name: string): Promise<boolean>
}

/** Server-internal secrets (the JWT secret, D3). Never reachable through the configuration API. */
export interface SecretRepository {
  get(name: string): Promise<string | undefined>
  /** Stores `value` unless a value exists; returns the value that is stored afterwards. */
  setIfAbsent(name: string, value: string): Promise<string>
  set(name: string, value: string): Promise<void>
}
