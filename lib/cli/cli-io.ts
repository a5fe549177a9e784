/**
 * What a CLI command reads and writes through (tests pass their own). A leaf, so that each
 * command's module and create-cli.ts, which registers them, do not import each other.
 */
export interface CliIo {
  out: (line: string) => void
  err: (line: string) => void
  env: NodeJS.ProcessEnv
  /** stderr is a terminal: progress may rewrite one line. */
  isTTY?: boolean
  /** Rewrites the progress line (terminals only). */
  progress?: (line: string) => void
  /** Aborted on SIGINT/SIGTERM (long-running commands stop cleanly). */
  signal?: AbortSignal
}

/** The process's own streams and environment. */
export const defaultIo: CliIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
  isTTY: process.stderr.isTTY,
  progress: (line) => process.stderr.write(`\r${line.slice(0, (process.stderr.columns || 120) - 1)}\x1b[K`)
}
