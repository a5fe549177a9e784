/**
 * The Node.js lines devicehub runs on (package.json `engines` says the same; test/cli/node-support.ts
 * checks both agree). Kept free of imports so that `bin/devicehub` can check before it loads anything
 * that could fail natively on another line (the SQLite driver, see store/dialects/sqlite-driver.ts).
 */

/** Even (LTS) majors, each run by CI; odd lines and older or newer ones are refused. */
export const SUPPORTED_NODE_MAJORS: readonly number[] = [20, 22, 24, 26]

/**
 * The one-line refusal for an unsupported Node.js version, or undefined when it is supported.
 *
 * @example
 * unsupportedNodeMessage('18.20.8') // 'devicehub: Node.js 18.20.8 is not supported; use Node.js 20, 22, 24 or 26'
 * unsupportedNodeMessage('24.21.0') // undefined
 */
export function unsupportedNodeMessage (nodeVersion: string = process.versions.node): string | undefined {
  if (SUPPORTED_NODE_MAJORS.includes(Number.parseInt(nodeVersion, 10))) return undefined
  const lines = SUPPORTED_NODE_MAJORS.slice(0, -1).join(', ') + ' or ' + String(SUPPORTED_NODE_MAJORS.at(-1))
  return `devicehub: Node.js ${nodeVersion} is not supported; use Node.js ${lines}`
}
