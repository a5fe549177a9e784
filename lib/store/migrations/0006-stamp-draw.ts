/**
 * PostgreSQL only: message stamps and ids drawn without a lock held until commit (issue #12).
 *
 * Until now every command or notification write took the `message_clock` row lock and kept it
 * until its commit was flushed, so stamps followed commit order and every writer of every
 * instance queued behind one lock. Now a write draws its stamps (and, for inserts, its ids)
 * with `devicehub_draw()`: a mutex (an advisory lock) held only while three sequences move,
 * never until commit. Stamps and ids therefore follow draw order, and commits may land out of
 * that order. Readers get their order back from `devicehub_stamp_horizon()` and the draw chain
 * (each event names the stamp drawn before it): see store/ordering/ordered-bus.ts.
 *
 * `devicehub_draw()` assigns the transaction's id BEFORE it draws and returns `next_xid`, the
 * next transaction id to be assigned AFTER it drew. Any writer that drew earlier got its
 * transaction id earlier, so once every transaction below `next_xid` has ended
 * (`pg_snapshot_xmin` of a fresh snapshot is at or above it), every stamp before this one is
 * committed or never will be.
 *
 * `ordered` keeps the old rule for a single instance whose bus does not ride the statement
 * (the memory bus): it takes the clock row's lock first, so those writes commit in stamp
 * order, and keeps `last_ts` as the committed high-water mark.
 *
 * SQLite serialises writers anyway and keeps the clock row.
 */
import type { Kysely, Migration } from 'kysely'
import { sql } from 'kysely'
import type { MigrationDialect } from './migration-dialect.js'

export function stampDrawMigration ({ kind }: MigrationDialect): Migration {
  return {
    async up (db: Kysely<unknown>) {
      if (kind !== 'postgres') return
      const names = await sql<{ schema: string, notification: string, command: string }>`select current_schema() as schema,
        pg_get_serial_sequence('notifications', 'id') as notification, pg_get_serial_sequence('commands', 'id') as command`.execute(db)
      const { schema, notification, command } = names.rows[0]!
      const stamps = `${quoteIdent(schema)}.devicehub_stamps`
      const clock = `${quoteIdent(schema)}.message_clock`
      // One mutex per schema: tenants of one database do not wait for each other.
      const mutex = `hashtext(${quoteLiteral(`devicehub_stamps:${schema}`)})`
      await sql.raw(`create sequence ${stamps} minvalue 0`).execute(db)
      await sql.raw(`select setval('${stamps}', greatest(0, (select last_ts from ${clock} where id = 1)))`).execute(db)
      await sql.raw(`create function ${quoteIdent(schema)}.devicehub_draw(kind text, n integer, now_ms bigint, ordered boolean)
        returns table(prev bigint, first_stamp bigint, first_id bigint, next_xid bigint)
        -- One row: the default estimate (1,000) makes every write look costly enough for JIT (~250 ms).
        language plpgsql volatile rows 1 as $fn$
        declare
          last_stamp bigint;
          stamp_to bigint;
          last_id bigint := 0;
          id_called boolean;
        begin
          if n <= 0 then
            -- Nothing to stamp: the chain must not move (the next draw names this one's prev).
            return;
          end if;
          perform pg_current_xact_id();
          if ordered then
            update ${clock} set last_ts = last_ts where id = 1;
          end if;
          perform pg_advisory_lock(${mutex});
          begin
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
          -- A fresh snapshot per expression (volatile function): the next id to be assigned now.
          next_xid := pg_snapshot_xmax(pg_current_snapshot())::text::bigint;
          return next;
        end
        $fn$`).execute(db)
      await sql.raw(`create function ${quoteIdent(schema)}.devicehub_stamp_horizon()
        returns table(stamp bigint, notification bigint, command bigint, next_xid bigint)
        language plpgsql volatile rows 1 as $fn$
        begin
          perform pg_advisory_lock(${mutex});
          begin
            select last_value into stamp from ${stamps};
            select case when is_called then last_value else last_value - 1 end into notification from ${notification};
            select case when is_called then last_value else last_value - 1 end into command from ${command};
          exception when query_canceled or others then
            perform pg_advisory_unlock(${mutex});
            raise;
          end;
          perform pg_advisory_unlock(${mutex});
          next_xid := pg_snapshot_xmax(pg_current_snapshot())::text::bigint;
          return next;
        end
        $fn$`).execute(db)
    },
    async down (db: Kysely<unknown>) {
      if (kind !== 'postgres') return
      await sql`drop function if exists devicehub_stamp_horizon()`.execute(db)
      await sql`drop function if exists devicehub_draw(text, integer, bigint, boolean)`.execute(db)
      await sql`update message_clock set last_ts = greatest(last_ts, (select last_value from devicehub_stamps)) where id = 1`.execute(db)
      await sql`drop sequence if exists devicehub_stamps`.execute(db)
    }
  }
}

function quoteIdent (name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}

function quoteLiteral (text: string): string {
  return `'${text.replaceAll("'", "''")}'`
}
