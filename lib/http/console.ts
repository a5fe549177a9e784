/**
 * The web console (issue 15) at `<context>/console`: the single-page app built by
 * `npm run build` into `dist/console-app/` and shipped in the package. Its few files are read
 * once at startup and served from memory with a strict Content-Security-Policy; the app itself
 * only talks to the REST API of the same origin.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { dirname, extname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { sendError } from './error-handler.js'

const HERE = dirname(fileURLToPath(import.meta.url))

/** dist/lib/http -> dist/console-app (package); lib/http -> dist/console-app (sources via tsx). */
const CANDIDATES = [join(HERE, '..', '..', 'console-app'), join(HERE, '..', '..', 'dist', 'console-app')]

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.map': 'application/json; charset=utf-8'
}

const CSP = [
  "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:",
  "connect-src 'self'", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'"
].join('; ')

export interface ConsoleAssets {
  /** File name -> contents, e.g. `index.html`, `app.js`. */
  files: Map<string, Buffer>
  directory: string
}

/** Reads the built console, or undefined when it was not built (`npm run build`). */
export function loadConsoleAssets (directory?: string): ConsoleAssets | undefined {
  const dir = directory ?? CANDIDATES.find((d) => existsSync(join(d, 'index.html')))
  if (dir === undefined || !existsSync(join(dir, 'index.html'))) return undefined
  const files = new Map<string, Buffer>()
  for (const name of readdirSync(dir)) {
    if (TYPES[extname(name)] !== undefined) files.set(name, readFileSync(join(dir, name)))
  }
  return { files, directory: dir }
}

/** The console's path for a REST base: the context (base without `/rest`) + `/console`. */
export function consolePath (basePath: string): string {
  return `${basePath.replace(/\/rest\/?$/, '')}/console`
}

function send (reply: FastifyReply, name: string, body: Buffer): FastifyReply {
  return reply
    .header('content-type', TYPES[extname(name)]!)
    .header('content-security-policy', CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    // index.html names the app's files; it must be fetched again after an upgrade.
    .header('cache-control', name === 'index.html' ? 'no-cache' : 'public, max-age=300')
    .send(body)
}

/**
 * Registers `GET <path>` (the app; the router ignores a trailing slash) and `<path>/<file>` (its assets).
 *
 * @example
 * registerConsole(app, { path: '/api/console', restBase: '/api/rest' })
 */
export function registerConsole (app: FastifyInstance, options: { path: string, restBase: string, directory?: string }): void {
  const assets = loadConsoleAssets(options.directory)
  const html = assets === undefined
    ? undefined
    : Buffer.from(assets.files.get('index.html')!.toString('utf8')
      .replaceAll('%REST_BASE%', options.restBase).replaceAll('%CONSOLE_PATH%', options.path))
  const index = (reply: FastifyReply): FastifyReply => {
    if (html === undefined) return sendError(reply, 503, 'The web console is not built: run npm run build')
    return send(reply, 'index.html', html)
  }
  app.get(options.path, { schema: { hide: true } }, async (_request, reply) => index(reply))
  app.get<{ Params: { file: string } }>(`${options.path}/:file`, { schema: { hide: true } }, async (request, reply) => {
    const name = request.params.file
    const body = name === 'index.html' ? undefined : assets?.files.get(name)
    if (body === undefined) return name === 'index.html' ? index(reply) : sendError(reply, 404, 'HTTP 404 Not Found')
    return send(reply, name, body)
  })
}
