/**
 * The action table (auth spec §1.6) with DeviceHive 3.4+/4.x numbering. Tokens carry these
 * ids in `a`; requests to `/token/create` may name them (case-insensitive) or give the ids.
 */
export const Action = {
  Any: 0,
  None: 1,
  GetNetwork: 2,
  GetDevice: 3,
  GetDeviceNotification: 4,
  GetDeviceCommand: 5,
  RegisterDevice: 6,
  CreateDeviceCommand: 7,
  UpdateDeviceCommand: 8,
  CreateDeviceNotification: 9,
  GetCurrentUser: 10,
  UpdateCurrentUser: 11,
  ManageUser: 12,
  ManageConfiguration: 13,
  ManageNetwork: 14,
  ManageToken: 15,
  ManagePlugin: 16,
  GetDeviceType: 17,
  ManageDeviceType: 18
} as const
export type Action = (typeof Action)[keyof typeof Action]

/** The default client set: what `a: []` grants and what a client's login token carries. */
export const CLIENT_ACTIONS: readonly Action[] = [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 15, 16, 17]
export const ADMIN_ONLY_ACTIONS: readonly Action[] = [12, 13, 14, 18]
/** Every concrete action, 2 to 18: what id 0 (`*`) expands to. */
export const ALL_ACTIONS: readonly Action[] = [...CLIENT_ACTIONS, ...ADMIN_ONLY_ACTIONS].sort((a, b) => a - b)

const byName = new Map<string, Action>(
  Object.entries(Action)
    .filter(([name]) => name !== 'Any' && name !== 'None')
    .map(([name, id]) => [name.toLowerCase(), id])
)
byName.set('*', Action.Any)
const validIds = new Set<number>(Object.values(Action))

/**
 * Converts a `/token/create` `actions` entry: a name (case-insensitive, `*` = 0) or an id.
 * Unknown names and ids give `undefined` (they are dropped silently, spec §2.2).
 */
export function parseAction (value: string | number): Action | undefined {
  if (typeof value === 'number') return validIds.has(value) ? value as Action : undefined
  return byName.get(value.toLowerCase())
}

export function isKnownActionId (id: number): boolean {
  return validIds.has(id)
}

/**
 * The concrete actions a token's `a` claim grants (spec §4.1): `[0]` all, `[]` the client set,
 * null/absent nothing, otherwise exactly the listed ids (1 = NONE grants nothing).
 */
export function expandActions (claim: readonly number[] | null | undefined): ReadonlySet<Action> {
  if (claim === null || claim === undefined) return new Set()
  // A frozen claim (a verified token's, reused by every request with that token) maps to one set.
  if (Object.isFrozen(claim)) {
    let set = expanded.get(claim)
    if (set === undefined) {
      set = expand(claim)
      expanded.set(claim, set)
    }
    return set
  }
  return expand(claim)
}

// A memo cache of expansions of immutable claim arrays.
const expanded = new WeakMap<readonly number[], ReadonlySet<Action>>()

function expand (claim: readonly number[]): ReadonlySet<Action> {
  if (claim.length === 0) return new Set(CLIENT_ACTIONS)
  if (claim.includes(Action.Any)) return new Set(ALL_ACTIONS)
  return new Set(claim.filter((id): id is Action => id !== Action.None && validIds.has(id)))
}
