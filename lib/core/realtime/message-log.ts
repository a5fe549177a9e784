/**
 * The message log: the one write path of commands, command updates and notifications, and where a
 * reader stands in it (the mark). Ordering and marks belong here, not to the bus: the bus only
 * carries events.
 *
 * `append` writes the row and announces it: on a PostgreSQL store with a bus that rides the
 * statement (the PostgreSQL doorbell) the write statement itself sends the NOTIFY (one round
 * trip; the store group-commits concurrent inserts); otherwise the row is written in a
 * transaction that publishes on the bus. Writes outside a caller's transaction are
 * group-committed here: notification inserts with one transaction, one clock step and one
 * multi-row INSERT per batch; command inserts and updates with one transaction per batch (each
 * its own clock step and statement, in call order). A failing batch is retried write by write.
 * Those writes are published once their batch committed, in batch order.
 *
 * Where commits land out of stamp order (PostgreSQL with its bus), a {@link LogOrder} the
 * dialect builds (log-ordering.ts) holds the mark; elsewhere commits follow stamps and the mark is
 * where the store's feed stands (`store.feed.position()`), on SQLite kept in memory (see
 * {@link PositionMemory}).
 */
import type { Store } from '../ports.js'
import type { Clock } from '../time.js'
import { countDown, countUp } from '../key-counts.js'
import { createWriteCombiner } from '../write-combiner.js'
import type { Bus, BusEvent, MessageEvent, MessageKind } from './bus.js'
import type { LogCursor } from './log-cursor.js'
import { furthest, LOG_ORIGIN } from './log-cursor.js'
import type { DrawLink, StoreRing } from './store-ring.js'
import type { MessageSelector } from './message-filter.js'
import { createNewestStamps } from './newest-stamps.js'
import type { CommandRecord, CommandWrite, NewNotification, NotificationRecord } from './message-records.js'
import { messageStamp } from './message-records.js'

/** One write to the log. */
export type LogWrite = { kind: 'notification', input: NewNotification } | CommandWrite

/** What `append` answers: the record written (undefined for an update of a command that is not there). */
export type Appended<W extends LogWrite> = W extends { kind: 'notification' } ? NotificationRecord
  : W extends { kind: 'command' } ? CommandRecord : CommandRecord | undefined

/** The order a log keeps where commits land out of stamp order (the dialect's, log-ordering.ts). */
export interface LogOrder {
  /** Everything at or below it is committed; everything later reaches the listeners after it was read. */
  mark(): LogCursor
  /** Resolves once this process's acknowledged writes are at or below the mark (or after a short cap). */
  caughtUp(): Promise<void>
  /** What was released for `deviceId` of `kind` after stamp `after`, where it knows (`MessageLog.knownAfter`). */
  knownAfter(kind: MessageKind, deviceId: string, after: number): ReadonlyArray<NotificationRecord | CommandRecord> | undefined
  /**
   * Told of a write that rode its statement, once committed, with its link in the draw chain:
   * the order releases it as it would its NOTIFY (which its bus does not deliver).
   */
  written(event: MessageEvent): void
}

/** The record of a kind. */
export type RecordOf<K extends MessageKind> = K extends 'notification' ? NotificationRecord : CommandRecord

export interface MessageLog {
  /**
   * Writes and announces a message; inside `tx` when given (the row and its event follow that
   * transaction). The one write path of both kinds.
   */
  append<W extends LogWrite>(write: W, tx?: Store): Promise<Appended<W>>
  /**
   * Where a new reader stands: everything at or below it is in the store, everything later
   * reaches the bus's listeners after it was read. Taken once this process's acknowledged writes
   * are in it (a client that wrote and then reads finds its write below it).
   *
   * @example
   * const upTo = await log.mark()
   * const page = await log.readAfter('notification', selector, cursor, upTo, 100)
   */
  mark(): Promise<LogCursor>
  /**
   * Resolves once this process's acknowledged writes have reached the bus's listeners (at once
   * where a write is announced before it is acknowledged; on PostgreSQL an own write waits for
   * the foreign writes drawn before it, at most a short cap). `mark()` takes its mark after it.
   *
   * @example
   * await log.append({ kind: 'command', input })
   * await log.caughtUp() // every listener has heard the insert
   */
  caughtUp(): Promise<void>
  /**
   * Messages of `kind` after `after` and at or below `upTo` (a mark), oldest first, at most
   * `limit`: inserts by stamp, updates by `lastUpdated` (each command's latest update). With
   * `liveAt`, commands expired by then (R7, `commandExpired`) are left out.
   */
  readAfter<K extends MessageKind>(
    kind: K, selector: MessageSelector, after: LogCursor, upTo: LogCursor, limit: number, liveAt?: number
  ): Promise<Array<RecordOf<K>>>
  /**
   * What of `deviceId` of `kind` was released after stamp `after`, where the log knows without
   * reading: nothing (`[]`: a one-device reader at or past the newest has nothing to read up to
   * the mark), the device's newest record alone, or undefined (read the store). Released records
   * are committed; one read from here is the record as the bus carried it.
   *
   * @example
   * const known = log.knownAfter('command', 'd1', cursor.clock)
   * const page = known ?? await log.readAfter('command', selector, cursor, mark, 100)
   */
  knownAfter<K extends MessageKind>(kind: K, deviceId: string, after: number): ReadonlyArray<RecordOf<K>> | undefined
}

export interface MessageLogOptions {
  store: Store
  bus: Bus
  clock: Clock
  /** The NOTIFY channel writes ride on a PostgreSQL store (`OrderedLog.channel`); undefined: publish on the bus. */
  channel: string | undefined
  /** Present where commits land out of stamp order. */
  order: LogOrder | undefined
  /** Called once per committed write of this process (the hub's message counts). */
  onWritten(kind: MessageKind): void
}

const MAX_BATCH = 200

/** The bus event of a written record. */
export function messageEvent (kind: MessageKind, record: NotificationRecord | CommandRecord): MessageEvent {
  const { id, deviceId, networkId, deviceTypeId } = record
  const name = 'notification' in record ? record.notification : record.command
  return { kind, id, deviceId, networkId, deviceTypeId, name, record }
}

/**
 * Each device's newest stamp per kind where this log sees every message write (SQLite: one
 * serving process per file, file-lock.ts, and this log is the one write path): a one-device poll
 * re-polling from its newest cursor then costs no backlog read. A stamp is noted when its row is
 * written inside a caller's transaction, before its commit (noted and never committed, a
 * rollback, costs a read, never an item). A write of the log's own is noted when the store's
 * call answers, after its commit, and a mark taken in between already holds the row: from the
 * start of the write's batch to its note the device's newest is not known, so no reader skips
 * the row. A write still queued for its batch is no such row: it is stamped after every commit
 * so far, so after any mark taken meanwhile, and reaches a reader live (issue #26: a device
 * re-polling while its client's next command waited for a batch read the store each time).
 */
interface LocalNewest {
  /** A write for `deviceId` of `kind` is queued; its batch begins it, its note or failure ends it. */
  writing(kind: MessageKind, deviceId: string): Flight
  /** Notes a written row; `committed` false inside a caller's transaction (its record is not kept). */
  note(kind: MessageKind, record: NotificationRecord | CommandRecord, committed: boolean): void
  /** Every row committed before this process's writes was stamped at or below `clock` (a mark's). */
  known(clock: number): void
  /** Unknown until a mark was taken (below it nothing is known per device) and while a write is in flight. */
  knownAfter(kind: MessageKind, deviceId: string, after: number): ReadonlyArray<NotificationRecord | CommandRecord> | undefined
}

/** A write of the log's own between its call and its note. */
interface Flight {
  /** Its batch begins: from here it may be stamped, and committed before it is noted. */
  begin(): void
  /** Noted, or failed. */
  end(): void
}

/** A write waiting in a combiner for its batch, with its flight where the log keeps them. */
interface Queued<W> {
  write: W
  flight: Flight | undefined
}

/** The writes of a batch that begins. */
function begun<W> (batch: ReadonlyArray<Queued<W>>): W[] {
  return batch.map((queued) => {
    queued.flight?.begin()
    return queued.write
  })
}

/** The key of a kind and device among the writes in flight. */
const flightKey = (kind: MessageKind, deviceId: string): string => `${kind}\u0000${deviceId}`

function createLocalNewest (): LocalNewest {
  const newest = createNewestStamps()
  /** Writes begun and not yet noted, per kind and device. */
  const inFlight = new Map<string, number>()
  let highest = 0
  let floorKnown = false
  return {
    writing (kind, deviceId) {
      const key = flightKey(kind, deviceId)
      let counted = false
      return {
        begin () {
          if (!counted) countUp(inFlight, key)
          counted = true
        },
        end () {
          if (counted) countDown(inFlight, key)
          counted = false
        }
      }
    },
    note (kind, record, committed) {
      const stamp = messageStamp(kind, record)
      highest = Math.max(highest, stamp)
      newest.remember(kind, record.deviceId, stamp, highest, committed ? record : undefined)
    },
    known (clock) {
      if (floorKnown) return
      floorKnown = true
      newest.forget(clock)
    },
    knownAfter (kind, deviceId, after) {
      if (!floorKnown || (inFlight.size > 0 && inFlight.has(flightKey(kind, deviceId)))) return undefined
      const known = newest.knownAfter(kind, deviceId, after)
      // An update of the device's commands in flight may change the command a read would find.
      if (known?.length === 1 && kind === 'command' && inFlight.has(flightKey('command-update', deviceId))) return undefined
      return known
    }
  }
}

/**
 * @example
 * const log = createMessageLog({ store, bus, clock, channel: undefined, order: undefined, onWritten: () => {} })
 * const row = await log.append({ kind: 'notification', input })
 */
export function createMessageLog (options: MessageLogOptions): MessageLog {
  const { store, bus, clock, channel, order, onWritten } = options
  const local = order === undefined && store.dialect === 'sqlite' ? createLocalNewest() : undefined
  const position = local === undefined ? undefined : createPositionMemory(bus)

  /** Publishes inside `tx` (fires at its commit) and counts the write once it committed. */
  const publish = async (event: BusEvent & MessageEvent, tx: Store): Promise<void> => {
    await bus.publish(event, tx)
    tx.afterCommit(() => onWritten(event.kind))
  }

  /** Publishes a write that has committed already and counts it. */
  const announce = async (kind: MessageKind, record: NotificationRecord | CommandRecord): Promise<void> => {
    local?.note(kind, record, true)
    position?.committed(kind, record)
    await bus.publish(messageEvent(kind, record))
    onWritten(kind)
  }

  /** Where the store said each record written by riding its statement stands in the draw (`StoreRing.drawn`). */
  const links = new WeakMap<NotificationRecord | CommandRecord, DrawLink>()
  // One ring for every write of this log: the store combines writes of one ring into one statement.
  const ring: StoreRing | undefined = channel === undefined ? undefined : { channel, drawn: (record, link) => links.set(record, link) }

  /** A write that rode its statement: committed with it (or with `tx`). */
  const rode = (event: MessageEvent, tx: Store | undefined): void => {
    const done = (): void => {
      order?.written(event)
      onWritten(event.kind)
    }
    if (tx === undefined) done()
    else tx.afterCommit(done)
  }

  /**
   * Runs a write of the store's in a transaction: on SQLite each repository write is one of its
   * own, run at once (QueryTemplates.transact; commits follow stamps there); elsewhere it runs in
   * a transaction opened here, so that batches commit one after the other, in stamp order.
   */
  const committed = <T>(fn: (target: Store) => Promise<T>): Promise<T> =>
    store.dialect === 'sqlite' ? fn(store) : store.transaction(fn)

  // One multi-row insert (one clock step) per batch.
  const combiner = createWriteCombiner((batch: Array<Queued<NewNotification>>) => {
    const inputs = begun(batch)
    return committed((target) => target.notifications.insertMany(inputs, clock.now()))
  }, { maxBatch: MAX_BATCH })

  /** Writes the row in `target`, riding `rides` when given. */
  const write = (
    target: Store, w: LogWrite, rides: StoreRing | undefined
  ): Promise<NotificationRecord | CommandRecord | undefined> => {
    const now = clock.now()
    if (w.kind === 'notification') return target.notifications.insert(w.input, now, rides)
    if (w.kind === 'command') return target.commands.insert(w.input, now, rides)
    return target.commands.update(w.deviceId, w.id, w.patch, now, rides)
  }

  /** Writes the row in `t` (a transaction) and publishes it there. */
  const inTx = async (t: Store, w: LogWrite): Promise<NotificationRecord | CommandRecord | undefined> => {
    const record = await write(t, w, undefined)
    if (record !== undefined) {
      local?.note(w.kind, record, false)
      if (position !== undefined) t.afterCommit(() => position.committed(w.kind, record))
      await publish(messageEvent(w.kind, record), t)
    }
    return record
  }

  // Command inserts and updates outside a caller's transaction are group-committed like
  // notifications: one transaction (one commit flush) per batch, each write with its own clock
  // step and statement, in call order (`CommandRepository.writeMany`; on SQLite one synchronous
  // call, no transaction object). Each call answers only after its batch committed.
  const commandWrites = createWriteCombiner((batch: Array<Queued<CommandWrite>>) => {
    const writes = begun(batch)
    return committed((target) => target.commands.writeMany(writes, clock.now()))
  }, { maxBatch: MAX_BATCH })

  const append = async (w: LogWrite, tx?: Store): Promise<NotificationRecord | CommandRecord | undefined> => {
    const target = tx ?? store
    if (ring !== undefined && target.dialect === 'postgres') {
      const record = await write(target, w, ring)
      if (record !== undefined) {
        const event = messageEvent(w.kind, record)
        event.order = links.get(record)
        rode(event, tx)
      }
      return record
    }
    if (tx !== undefined) return inTx(tx, w)
    // Committed when the combiner answers; announced from here, so a batch is retried write by
    // write only when its write failed, never for what came after its commit. Calls answered
    // by one batch run on in its order, so the bus sees the batch in stamp order.
    const flight = local?.writing(w.kind, 'input' in w ? w.input.deviceId : w.deviceId)
    try {
      const record = w.kind === 'notification'
        ? await combiner.write({ write: w.input, flight })
        : await commandWrites.write({ write: w, flight })
      if (record !== undefined) await announce(w.kind, record)
      return record
    } finally {
      flight?.end()
    }
  }

  const readAfter = (
    kind: MessageKind, selector: MessageSelector, after: LogCursor, upTo: LogCursor, limit: number, liveAt?: number
  ): Promise<Array<NotificationRecord | CommandRecord>> => {
    const query = { selector, after, upTo, limit, liveAt }
    if (kind === 'notification') return store.feed.notifications(query)
    return kind === 'command' ? store.feed.commands(query) : store.feed.updates(query)
  }

  return {
    append: append as MessageLog['append'],
    async mark () {
      if (position !== undefined) {
        const known = position.current()
        if (known !== undefined) return known
      }
      if (order === undefined) {
        const ticket = position?.reading() ?? 0
        const read = await store.feed.position()
        local?.known(read.clock)
        position?.read(read, ticket)
        return read
      }
      await order.caughtUp()
      return order.mark()
    },
    caughtUp: () => order === undefined ? Promise.resolve() : order.caughtUp(),
    readAfter: readAfter as MessageLog['readAfter'],
    knownAfter<K extends MessageKind> (kind: K, deviceId: string, after: number) {
      return (order ?? local)?.knownAfter(kind, deviceId, after) as ReadonlyArray<RecordOf<K>> | undefined
    }
  }
}

/**
 * Where the feed of a SQLite file stands, kept in memory instead of read per mark (issue #26: the
 * read was a statement per long poll, the largest of a round trip). Exact because this process is
 * the file's only message writer (file-lock.ts: one serving process per file; the CLI writes no
 * messages) and every write passes through the log: the position is the store's, read once, raised
 * by each write noted here after its commit (on one SQLite connection commits follow stamps and
 * ids, so all below a committed stamp or id is committed too). A mark taken between a commit and
 * its note is lower than the file's and still right: the write's event comes after it and is
 * delivered live, as one committed after the mark would be. Rows deleted (retention, a deleted
 * device) leave it above the file's maximum ids, which is harmless: ids are never reused
 * (AUTOINCREMENT) and the clock never goes back. A `resync` (another process committed to the
 * file) drops what was read: the next mark reads the file again.
 */
interface PositionMemory {
  /** The position, once read and while nothing made it doubtful. */
  current(): LogCursor | undefined
  /** Call before reading the store's position; give the answer to {@link PositionMemory.read}. */
  reading(): number
  /** The store's position, read after `reading()` answered `ticket`. */
  read(position: LogCursor, ticket: number): void
  /** A write of the log has committed. */
  committed(kind: MessageKind, record: NotificationRecord | CommandRecord): void
}

function createPositionMemory (bus: Bus): PositionMemory {
  // What this process's writes reached since it started: a read that missed a write noted
  // meanwhile still gets it.
  let noted: LogCursor = LOG_ORIGIN
  let known: LogCursor | undefined
  // Bumped on each resync: a read begun before one is not kept.
  let epoch = 0
  bus.subscribe((event) => {
    if (event.kind !== 'resync') return
    known = undefined
    epoch++
  })
  return {
    current: () => known,
    reading: () => epoch,
    read (position, ticket) {
      if (ticket === epoch) known = furthest(furthest(position, known), noted)
    },
    committed (kind, record) {
      const id = (of: MessageKind): number => kind === of ? record.id : 0
      noted = furthest(noted, { clock: messageStamp(kind, record), notification: id('notification'), command: id('command') })
      if (known !== undefined) known = furthest(known, noted)
    }
  }
}
