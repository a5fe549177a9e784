/**
 * The common list parameters of spec §1.7 (`sortField`, `sortOrder`, `take`, `skip`), shared
 * by the network, device type, device and user lists. Lives with networks because they were
 * the first list; the other registry areas import it from here.
 */
import { badRequest } from '../errors.js'

export interface ListQueryInput {
  sortField?: string
  sortOrder?: string
  take?: number
  skip?: number
}

export interface ListPage<F extends string> {
  sortField?: F
  sortOrder?: 'ASC' | 'DESC'
  take: number
  skip: number
}

/**
 * Validates the list parameters. `sortFields` maps lower-case wire names to storage names;
 * an unknown field is 400 `Invalid request parameters`, an unknown order 400
 * `Unparseable sort order : {value}`. An absent `take` means `maxTake`, a larger one is capped
 * (R10). `sortOrder` only applies when `sortField` is given, but is always validated.
 *
 * @example
 * parseListQuery({ sortField: 'name', sortOrder: 'desc' }, { id: 'id', name: 'name' }, 10000)
 * // { sortField: 'name', sortOrder: 'DESC', take: 10000, skip: 0 }
 */
export function parseListQuery<F extends string> (
  input: ListQueryInput, sortFields: Readonly<Record<string, F>>, maxTake: number
): ListPage<F> {
  let sortOrder: 'ASC' | 'DESC' | undefined
  if (input.sortOrder !== undefined && input.sortOrder !== '') {
    const order = input.sortOrder.toUpperCase()
    if (order !== 'ASC' && order !== 'DESC') throw badRequest(`Unparseable sort order : ${input.sortOrder}`)
    sortOrder = order
  }
  let sortField: F | undefined
  if (input.sortField !== undefined && input.sortField !== '') {
    const key = input.sortField.toLowerCase()
    if (!Object.hasOwn(sortFields, key)) throw badRequest()
    sortField = sortFields[key]
  }
  const take = input.take ?? maxTake
  const skip = input.skip ?? 0
  if (!Number.isSafeInteger(take) || take < 0 || !Number.isSafeInteger(skip) || skip < 0) {
    // A take beyond the safe range is still a page request: cap it, like any large take.
    if (!(typeof take === 'number' && take > Number.MAX_SAFE_INTEGER && Number.isSafeInteger(skip) && skip >= 0)) throw badRequest()
  }
  return sortField === undefined
    ? { take: Math.min(take, maxTake), skip }
    : { sortField, sortOrder: sortOrder ?? 'ASC', take: Math.min(take, maxTake), skip }
}
