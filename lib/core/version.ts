/** This server's own version (R6 `serverVersion`); a test keeps it equal to package.json. */
export const SERVER_VERSION = '0.1.0'

/** The DeviceHive API level implemented (R6 `apiVersion`). */
export const API_VERSION = '4.1.0'
