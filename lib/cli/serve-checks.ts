/**
 * `serve`'s own checks of its flags, before anything opens, binds or prints "listening": each
 * refusal is one line naming the flag (and its environment variable) and what is wrong with it.
 * Secrets are never echoed.
 */

const SEGMENT = /^[A-Za-z0-9._~-]+$/

/**
 * The REST base path: a path of its own below the root (the root lists the links and serves
 * `/metrics`; the console and the WebSocket API sit beside the base path).
 *
 * @example
 * checkBasePath('/api/rest') // ok
 * checkBasePath('/')         // throws: --base-path '/': the REST API needs a path of its own, ...
 */
export function checkBasePath (path: string): void {
  const trimmed = path.trim().replace(/^\/+|\/+$/g, '')
  if (trimmed === '') {
    throw new Error(`--base-path '${path}' (DEVICEHUB_BASE_PATH): the REST API needs a path of its own, such as /api/rest ` +
      '(the root lists the links and serves /metrics)')
  }
  const bad = trimmed.split('/').find((segment) => !SEGMENT.test(segment))
  if (bad !== undefined) {
    throw new Error(`--base-path '${path}' (DEVICEHUB_BASE_PATH): '${bad}' is not a path segment; ` +
      'use letters, digits and . _ ~ - between slashes, such as /api/rest')
  }
}

/**
 * The first admin's password, checked now rather than when the first start creates the admin,
 * after the server already listens.
 *
 * @example
 * checkAdminPassword('abc') // throws: --admin-password (DEVICEHUB_ADMIN_PASSWORD): ... 6 to 128 characters (this one has 3)
 */
export function checkAdminPassword (password: string | undefined): void {
  if (password === undefined) return
  if (password.length < 6 || password.length > 128) {
    throw new Error('--admin-password (DEVICEHUB_ADMIN_PASSWORD): the admin password must have 6 to 128 characters ' +
      `(this one has ${password.length})`)
  }
}
