/**
 * How far an acknowledged write is guaranteed to survive, on either dialect.
 *
 * - `full`: it survives a power failure or an operating-system crash (SQLite `synchronous=FULL`;
 *   PostgreSQL `synchronous_commit=on`, the server's default).
 * - `normal`: it survives a crash of the devicehub process; a power failure (SQLite) or a crash
 *   of the database server or machine (PostgreSQL) may lose the last commits, a fraction of a
 *   second's worth, never corrupting what remains (SQLite `synchronous=NORMAL` in WAL mode;
 *   PostgreSQL `synchronous_commit=off` on devicehub's connections).
 *
 * Defaults: `normal` on SQLite (issue #16: `full` cost about a quarter of the insert rate),
 * `full` on PostgreSQL (the server's own setting: a shared database keeps its operator's choice
 * unless asked). `normal` on PostgreSQL saves each commit's wait for its WAL flush, which is what
 * bounds group-committed writes there.
 */
export type Durability = 'full' | 'normal'
