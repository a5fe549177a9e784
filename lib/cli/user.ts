/**
 * `devicehub user create|passwd|list|unlock`: account administration straight on the database
 * (no server needed, no token), for the first admin of a shared deployment, a forgotten
 * password, or an admin locked out by the lockout policy. A database file that does not exist
 * is refused rather than created empty.
 *
 * A password comes from `--password`, else from DEVICEHUB_USER_PASSWORD, else one is generated
 * and printed once. A password change increments the user's token version: tokens issued before
 * it stop working, and a running server ends their open waits (subscriptions, long polls): over
 * PostgreSQL it hears the change on its bus, on SQLite it sees another process commit to its file.
 * An unlock revives none (the lock already revoked them).
 */
import type { Command } from 'commander'
import { Option } from 'commander'
import { generatePassword, hashPassword } from '../core/auth/passwords.js'
import { DEFAULT_HUB_CHANNEL } from '../doorbells/postgres-doorbell.js'
import { encodeDoorbellEvent } from '../doorbells/postgres-doorbell-wire.js'
import { formatNullableTimestamp } from '../core/time.js'
import type { UserRecord } from '../core/users/user-ports.js'
import { UserRole, UserStatus } from '../core/users/user-ports.js'
import { UserMessages } from '../core/users/user-service.js'
import type { KyselyStore } from '../store/kysely-store.js'
import { openStore } from '../store/open-store.js'
import type { CliIo } from './cli-io.js'

const ROLE_NAMES: Record<number, string> = { [UserRole.Administrator]: 'admin', [UserRole.Client]: 'client' }
const STATUS_NAMES: Record<number, string> = {
  [UserStatus.Active]: 'active', [UserStatus.LockedOut]: 'locked', [UserStatus.Disabled]: 'disabled'
}

/** Opens an existing database; a SQLite path that does not exist is an error, not a new file. */
async function openExisting (location: string): Promise<KyselyStore> {
  return openStore(location, { mustExist: true })
}

async function withStore<T> (location: string, fn: (store: KyselyStore) => Promise<T>): Promise<T> {
  const store = await openExisting(location)
  // Servers on this PostgreSQL database drop their cached reads of the rows changed at commit
  // (a no-op on SQLite, where a server sees the file's commit itself).
  store.watchOwnWrites((tx) => tx.notify(DEFAULT_HUB_CHANNEL, encodeDoorbellEvent({ kind: 'stale-reads' })))
  try {
    return await fn(store)
  } finally {
    await store.close()
  }
}

async function findUser (store: KyselyStore, login: string): Promise<UserRecord> {
  const user = await store.users.findByLogin(login)
  if (user === undefined) throw new Error(`No user with login '${login}'`)
  return user
}

/** The given password (checked like the REST API does), or a generated one that is printed. */
function choosePassword (given: string | undefined, io: CliIo): { password: string, generated: boolean } {
  const password = given || io.env.DEVICEHUB_USER_PASSWORD || undefined
  if (password === undefined) return { password: generatePassword(), generated: true }
  if (password.length < 6 || password.length > 128) throw new Error(UserMessages.password)
  return { password, generated: false }
}

/**
 * Registers the `user` command group.
 *
 * @example
 * registerUserCommands(program, io, () => new Option('--db <location>').default('./devicehub.db'))
 */
export function registerUserCommands (program: Command, io: CliIo, dbOption: () => Option): void {
  const user = program.command('user').description('manage user accounts directly in the database (create, passwd, list, unlock)')
  const passwordOption = (): Option => new Option(
    '--password <password>', 'the password (else DEVICEHUB_USER_PASSWORD, else generated and printed once)'
  )

  user.command('create')
    .description('create a user')
    .requiredOption('--login <login>', 'the new user\'s login (3 to 128 characters)')
    .addOption(new Option('--role <role>', 'admin or client').choices(['admin', 'client']).default('client'))
    .addOption(passwordOption())
    .addOption(dbOption())
    .action(async (options: { login: string, role: 'admin' | 'client', password?: string, db: string }) => {
      const login = options.login.trim()
      if (login.length < 3 || login.length > 128) throw new Error(UserMessages.login)
      const { password, generated } = choosePassword(options.password, io)
      await withStore(options.db, async (store) => {
        if (await store.users.findByLogin(login) !== undefined) throw new Error(UserMessages.duplicate)
        const role = options.role === 'admin' ? UserRole.Administrator : UserRole.Client
        const id = await store.users.insert({
          login, passwordHash: await hashPassword(password), role, status: UserStatus.Active, data: null, introReviewed: false,
          allDeviceTypesAvailable: true
        })
        io.out(`created ${options.role} '${login}' (id ${id})`)
        if (generated) io.out(`password: ${password}`)
      })
    })

  user.command('passwd')
    .description('set a user\'s password (tokens issued before stop working)')
    .requiredOption('--login <login>', 'the user\'s login')
    .addOption(passwordOption())
    .addOption(dbOption())
    .action(async (options: { login: string, password?: string, db: string }) => {
      const { password, generated } = choosePassword(options.password, io)
      await withStore(options.db, async (store) => {
        const found = await findUser(store, options.login)
        const passwordHash = await hashPassword(password)
        await store.transaction(async (tx) => {
          await tx.users.update(found.id, { passwordHash, loginAttempts: 0 })
          // Servers on this database end the open waits of the old tokens: over PostgreSQL they
          // hear this NOTIFY at commit; SQLite has none (a server sees the file's commit itself).
          await tx.notify(DEFAULT_HUB_CHANNEL, encodeDoorbellEvent({ kind: 'revoke', userId: found.id, what: 'tokens', keptTokenId: '' }))
        })
        io.out(`password of '${found.login}' changed`)
        if (generated) io.out(`password: ${password}`)
      })
    })

  user.command('list')
    .description('list users: id, login, role, status, last login')
    .option('--json', 'one JSON array instead of a table')
    .addOption(dbOption())
    .action(async (options: { json?: boolean, db: string }) => {
      await withStore(options.db, async (store) => {
        const users = await store.users.list({ take: 1_000_000 })
        const rows = users.map((u) => ({
          id: u.id, login: u.login, role: ROLE_NAMES[u.role] ?? String(u.role), status: STATUS_NAMES[u.status] ?? String(u.status),
          lastLogin: formatNullableTimestamp(u.lastLogin)
        }))
        if (options.json === true) {
          io.out(JSON.stringify(rows))
          return
        }
        io.out(['id', 'login', 'role', 'status', 'lastLogin'].join('\t'))
        for (const r of rows) io.out([r.id, r.login, r.role, r.status, r.lastLogin ?? '-'].join('\t'))
      })
    })

  user.command('unlock')
    .description('make a locked or disabled user active again and reset its failed-login counter')
    .requiredOption('--login <login>', 'the user\'s login')
    .addOption(dbOption())
    .action(async (options: { login: string, db: string }) => {
      await withStore(options.db, async (store) => {
        const found = await findUser(store, options.login)
        await store.users.update(found.id, { status: UserStatus.Active, loginAttempts: 0 })
        io.out(`'${found.login}' is active (was ${STATUS_NAMES[found.status] ?? found.status})`)
      })
    })
}
