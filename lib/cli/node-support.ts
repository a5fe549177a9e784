/**
 * The Node.js lines devicehub runs on (package.json `engines` says the same; test/cli/node-support.ts
 * checks both agree). Kept free of imports so that `bin/devicehub` can check before it loads anything
 * that could fail on another line (the SQLite driver, see store/dialects/sqlite-driver.ts).
 */

/** Even (LTS) majors, each run by CI; odd lines and older or newer ones are refused. */
export const SUPPORTED_NODE_MAJORS: readonly number[] = [20, 22, 24, 26]

/** Lines supported from a later minor: 22 has `node:sqlite` without a flag from 22.13. */
export const FIRST_SUPPORTED_MINOR: Readonly<Record<number, number>> = { 22: 13 }

/**
 * The one-line refusal for an unsupported Node.js version, or undefined when it is supported.
 *
 * @example
 * unsupportedNodeMessage('18.20.8') // 'devicehub: Node.js 18.20.8 is not supported; use Node.js 20, 22.13+, 24 or 26'
 * unsupportedNodeMessage('24.21.0') // undefined
 */
export function unsupportedNodeMessage (nodeVersion: string = process.versions.node): string | undefined {
  const [major = 0, minor = 0] = nodeVersion.split('.').map((part) => Number.parseInt(part, 10))
  if (SUPPORTED_NODE_MAJORS.includes(major) && minor >= (FIRST_SUPPORTED_MINOR[major] ?? 0)) return undefined
  const names = SUPPORTED_NODE_MAJORS.map((line) => FIRST_SUPPORTED_MINOR[line] === undefined
    ? String(line)
    : `${line}.${FIRST_SUPPORTED_MINOR[line]}+`)
  return `devicehub: Node.js ${nodeVersion} is not supported; use Node.js ${names.slice(0, -1).join(', ')} or ${names.at(-1)}`
}
