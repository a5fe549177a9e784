/**
 * One serving process per SQLite file. Two servers on one file would each wake only their own
 * long polls (the memory bus is per process), so a poll on one would miss a command posted
 * through the other. The lock is a `<file>.lock` file created exclusively, holding the owner's
 * pid; a lock whose process is gone (a crash, SIGKILL) is taken over. Short-lived readers such as
 * `devicehub token` do not take it.
 */
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs'
import { hostname } from 'node:os'

export interface FileLock {
  readonly path: string
  /** Removes the lock file if it is still ours (idempotent). */
  release(): void
}

interface LockOwner {
  pid: number
  host: string
  startedAt: string
}

/**
 * @example
 * const lock = lockDatabaseFile('./devicehub.db')   // throws if another process serves it
 * lock.release()
 */
export function lockDatabaseFile (database: string): FileLock {
  const path = `${database}.lock`
  const me: LockOwner = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString() }
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o644)
      try {
        writeSync(fd, JSON.stringify(me))
      } finally {
        closeSync(fd)
      }
      return ownedLock(path, me)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw lockFileError(database, path, error as NodeJS.ErrnoException)
    }
    const owner = readOwner(path)
    if (owner !== undefined && isAlive(owner)) {
      throw new Error(`${database} is in use by another devicehub process (pid ${owner.pid} on ${owner.host}, ` +
        `started ${owner.startedAt}; lock file ${path}). Stop it first: one SQLite file serves one process ` +
        '(several instances need PostgreSQL).')
    }
    // The owner is gone: take the stale lock over.
    try {
      unlinkSync(path)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
  }
  throw new Error(`Could not lock ${database} (lock file ${path})`)
}

/** The operator's words for why the lock file could not be written (the raw error names only `<file>.lock`). */
function lockFileError (database: string, path: string, error: NodeJS.ErrnoException): Error {
  const why: Record<string, string> = {
    EACCES: 'permission denied',
    EPERM: 'permission denied',
    EROFS: 'the file system is read-only',
    ENOENT: 'its directory does not exist',
    ENOTDIR: 'its directory is not a directory'
  }
  const reason = why[error.code ?? '']
  if (reason === undefined) return error
  return new Error(`Cannot use the database ${database}: its lock file ${path} cannot be created (${reason}); ` +
    'devicehub needs write access to the database\'s directory', { cause: error })
}

function ownedLock (path: string, me: LockOwner): FileLock {
  let released = false
  const release = (): void => {
    if (released) return
    released = true
    process.removeListener('exit', release)
    const owner = readOwner(path)
    if (owner?.pid === me.pid && owner.startedAt === me.startedAt) {
      try {
        unlinkSync(path)
      } catch {
        // Already gone.
      }
    }
  }
  // A process that exits without closing (process.exit after a second signal) still releases it.
  process.on('exit', release)
  return { path, release }
}

function readOwner (path: string): LockOwner | undefined {
  try {
    const owner = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockOwner>
    if (typeof owner.pid !== 'number' || typeof owner.host !== 'string') return undefined
    return { pid: owner.pid, host: owner.host, startedAt: String(owner.startedAt) }
  } catch {
    // Unreadable or half-written: treated as stale only when it stays so (see isAlive).
    return undefined
  }
}

function isAlive (owner: LockOwner): boolean {
  // Another machine on a shared file system: its pid means nothing here, assume it is alive.
  if (owner.host !== hostname()) return true
  if (owner.pid === process.pid) return true
  try {
    process.kill(owner.pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
