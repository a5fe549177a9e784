/**
 * PostgreSQL's stamp draw functions, `devicehub_draw()` and `devicehub_stamp_horizon()`, as the
 * migrations create them: 0006 on a new database, 0017 over the versions 0006 created before
 * (see 0017-draw-xid.ts for what changed). One text, so the two cannot drift apart.
 *
 * Both return `next_xid`: a transaction id above that of every writer that drew up to their
 * position, so that once no transaction below it runs (`pg_snapshot_xmin` of a fresh snapshot
 * is at or above it) every stamp up to that position is committed or never will be. A snapshot's
 * `xmax` is not such an id: it is one past the newest transaction that ENDED, and a writer that
 * is still running may hold it or an id above it. The id is taken under the draw's mutex
 * instead: every writer that drew before had its id assigned before its own draw, so before this
 * one, and ids are handed out in increasing order.
 */
import type { Kysely } from 'kysely'
import { sql } from 'kysely'

/** Where the functions live and the sequences of the message ids they move. */
export interface StampDrawNames {
  schema: string
  notification: string
  command: string
}

/** The names of the current schema and of its message id sequences. */
export async function stampDrawNames (db: Kysely<unknown>): Promise<StampDrawNames> {
  const names = await sql<StampDrawNames>`select current_schema() as schema,
    pg_get_serial_sequence('notifications', 'id') as notification, pg_get_serial_sequence('commands', 'id') as command`.execute(db)
  return names.rows[0]!
}

/** The `devicehub_stamps` sequence of the schema (created by 0006). */
export function stampsSequence ({ schema }: StampDrawNames): string {
  return `${quoteIdent(schema)}.devicehub_stamps`
}

/** `create or replace` statements of both functions, over the schema's sequences and clock row. */
export function stampDrawFunctions (names: StampDrawNames): string[] {
  const { schema, notification, command } = names
  const stamps = stampsSequence(names)
  const clock = `${quoteIdent(schema)}.message_clock`
  // One mutex per schema: tenants of one database do not wait for each other.
  const mutex = `hashtext(${quoteLiteral(`devicehub_stamps:${schema}`)})`
  const draw = `create or replace function ${quoteIdent(schema)}.devicehub_draw(kind text, n integer, now_ms bigint, ordered boolean)
    returns table(prev bigint, first_stamp bigint, first_id bigint, next_xid bigint)
    -- One row: the default estimate (1,000) makes every write look costly enough for JIT (~250 ms).
    language plpgsql volatile rows 1 as $fn$
    declare
      last_stamp bigint;
      stamp_to bigint;
      last_id bigint := 0;
      id_called boolean;
      had_xid boolean;
      own_xid bigint;
    begin
      if n <= 0 then
        -- Nothing to stamp: the chain must not move (the next draw names this one's prev).
        return;
      end if;
      if ordered then
        update ${clock} set last_ts = last_ts where id = 1;
      end if;
      -- A transaction that had its id before the draw may hold one below an earlier drawer's.
      had_xid := pg_current_xact_id_if_assigned() is not null;
      perform pg_advisory_lock(${mutex});
      begin
        -- Assigned under the mutex: above the id of every writer that drew before.
        own_xid := pg_current_xact_id()::text::bigint;
        select last_value into last_stamp from ${stamps};
        stamp_to := greatest(last_stamp + n, now_ms + n - 1);
        perform setval('${stamps}', stamp_to);
        if kind = 'notification' then
          select last_value, is_called into last_id, id_called from ${notification};
          if not id_called then last_id := last_id - 1; end if;
          perform setval('${notification}', last_id + n);
        elsif kind = 'command' then
          select last_value, is_called into last_id, id_called from ${command};
          if not id_called then last_id := last_id - 1; end if;
          perform setval('${command}', last_id + n);
        end if;
      exception when query_canceled or others then
        perform pg_advisory_unlock(${mutex});
        raise;
      end;
      perform pg_advisory_unlock(${mutex});
      if ordered then
        update ${clock} set last_ts = stamp_to where id = 1;
      end if;
      prev := last_stamp;
      first_stamp := stamp_to - n + 1;
      first_id := last_id + 1;
      -- With an id from before the draw, the best cheap guess: a gap checked too early costs a
      -- resynchronisation, whose horizon is exact (devicehub_stamp_horizon).
      next_xid := case when had_xid then greatest(own_xid + 1, pg_snapshot_xmax(pg_current_snapshot())::text::bigint)
        else own_xid + 1 end;
      return next;
    end
    $fn$`
  // Called on its own (the store's pool, no open transaction): its id is new, taken under the mutex.
  const horizon = `create or replace function ${quoteIdent(schema)}.devicehub_stamp_horizon()
    returns table(stamp bigint, notification bigint, command bigint, next_xid bigint)
    language plpgsql volatile rows 1 as $fn$
    begin
      perform pg_advisory_lock(${mutex});
      begin
        select last_value into stamp from ${stamps};
        select case when is_called then last_value else last_value - 1 end into notification from ${notification};
        select case when is_called then last_value else last_value - 1 end into command from ${command};
        next_xid := pg_current_xact_id()::text::bigint;
      exception when query_canceled or others then
        perform pg_advisory_unlock(${mutex});
        raise;
      end;
      perform pg_advisory_unlock(${mutex});
      return next;
    end
    $fn$`
  return [draw, horizon]
}

/** A PostgreSQL identifier, quoted. */
export function quoteIdent (name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}

function quoteLiteral (text: string): string {
  return `'${text.replaceAll("'", "''")}'`
}
