/**
 * Which code a profiled script URL belongs to, for the profile summaries (cpu-profile-summary.ts,
 * perf-summary.ts): a package under node_modules, Node's internals, or a devicehub file.
 *
 * @example
 * codeSource('file:///app/node_modules/@fastify/ajv-compiler/index.js') // '@fastify/ajv-compiler'
 * codeSource('file:///tmp/build/lib/core/time.js') // 'devicehub lib/core/time'
 */
export function codeSource (url: string): string {
  const modules = url.lastIndexOf('node_modules/')
  if (modules >= 0) {
    const parts = url.slice(modules + 'node_modules/'.length).split('/')
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!
  }
  if (url.startsWith('node:')) return 'node internals'
  const lib = url.indexOf('/lib/')
  return lib >= 0 ? `devicehub ${url.slice(lib + 1).replace(/\.js(:\d+:\d+)?$/, '')}` : url
}
