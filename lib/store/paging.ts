import type { SelectQueryBuilder } from 'kysely'
import type { Page } from '../core/ports.js'

/**
 * Applies `take`/`skip`. SQLite needs a LIMIT before an OFFSET, so a missing `take` becomes the
 * largest safe integer, which both dialects accept.
 */
export function applyPage<DB, TB extends keyof DB, O> (query: SelectQueryBuilder<DB, TB, O>, page: Page): SelectQueryBuilder<DB, TB, O> {
  if (page.take === undefined && (page.skip ?? 0) === 0) return query
  query = query.limit(page.take ?? Number.MAX_SAFE_INTEGER)
  return (page.skip ?? 0) > 0 ? query.offset(page.skip!) : query
}
