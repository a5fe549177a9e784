/**
 * Which code a profiled script URL belongs to, for the profile summaries (cpu-profile-summary.ts,
 * perf-summary.ts): a package under node_modules, Node's internals, or a devicehub file.
 *
 * @example
 * codeSource('file:///app/node_modules/@fastify/ajv-compiler/index.js') // '@fastify/ajv-compiler'
 * codeSource('file:///tmp/build/lib/core/time.js') // 'devicehub lib/core/time'
 */
export function codeSource (url: string): string {
  const path = shortPath(url)
  if (url.includes('node_modules/')) {
    const parts = path.split('/')
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!
  }
  if (url.startsWith('node:')) return 'node internals'
  return path.startsWith('lib/') ? `devicehub ${path.replace(/\.js(:\d+:\d+)?$/, '')}` : url
}

/**
 * A URL without what every frame shares: a package's path from its name, a devicehub file's from
 * `lib/`; any other URL as it is.
 *
 * @example
 * shortPath('file:///app/node_modules/fastify/lib/reply.js:156:33') // 'fastify/lib/reply.js:156:33'
 */
export function shortPath (url: string): string {
  const modules = url.lastIndexOf('node_modules/')
  if (modules >= 0) return url.slice(modules + 'node_modules/'.length)
  const lib = url.indexOf('/lib/')
  return lib >= 0 ? url.slice(lib + 1) : url
}
