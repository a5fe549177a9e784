/**
 * Lenient inputs (R12): what DeviceHive's Java binding accepts, turned into the strict shape
 * the schemas describe, before they are checked. Transport-neutral: it reads plain JSON Schema
 * (the TypeBox objects of the adapters are JSON Schema). The HTTP adapter applies it to every
 * body and query string with the route's schemas (lib/http/validation.ts); the WebSocket adapter
 * applies it to the entity payloads of its actions (`payload`, `device`, `user`, `network`, ...)
 * with the same REST body schemas (lib/http/websocket/actions.ts) and reads the top-level frame
 * fields with its own helpers, which follow the same rules (lib/http/websocket/fields.ts).
 *
 * It never rejects anything and never widens what a value may name: it only rewrites a value
 * into the strict form of the same value. Values still of the wrong kind are left as they are,
 * and the check that follows answers 400 (the route's schema over REST, the core's own checks
 * or the compiled body schema over WebSocket).
 *
 * The rules, each applied only where the schema asks for that kind of value, at any depth the
 * schema describes (properties it does not declare, and open schemas, are left untouched):
 * - a JSON `null` in an optional declared property is the same as the property being absent
 *   (a required property keeps its null, for the check to refuse);
 * - a single string where a list is expected is a list of one (`"actions": "GetDevice"`), its
 *   item read by the item schema (`"networkIds": "5"` is `[5]` when items are integers);
 * - `true` / `false` in any letter case where a boolean is expected (`force=False`);
 * - an optionally signed string of at most 16 digits, within the safe-integer range, where an
 *   integer is expected (`"networkId": "5"`);
 * - with `emptyIsNull` (query strings), an empty value in a declared property where no string is
 *   expected is a null, so absent if optional: that is how a query string spells it
 *   (`?take&force=`, what JavaScript clients write for null); in a body, the same for a property
 *   that may be null (`"lifetime": ""`), so REST and WebSocket read it alike (issue #23);
 * A string is never rewritten where the schema also accepts a string.
 */

/** The subset of JSON Schema the rules read (TypeBox schemas are plain objects of this shape). */
interface InputSchema {
  type?: string | readonly string[]
  properties?: Readonly<Record<string, InputSchema>>
  required?: readonly string[]
  items?: InputSchema
  anyOf?: readonly InputSchema[]
  oneOf?: readonly InputSchema[]
}

type Kind = 'null' | 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object'

const BOOLEAN = /^(?:true|false)$/i
const DIGITS = /^-?\d{1,16}$/

function branches (schema: InputSchema): readonly InputSchema[] | undefined {
  return schema.anyOf ?? schema.oneOf
}

/**
 * Whether the schema names `kind` explicitly. A schema that names no type at all (unknown,
 * any JSON) accepts everything, so no rule ever rewrites a value for it.
 */
function names (schema: InputSchema, kind: Kind): boolean {
  const alternatives = branches(schema)
  if (alternatives !== undefined) return alternatives.some((branch) => names(branch, kind))
  const { type } = schema
  if (type === undefined) return false
  const types: readonly string[] = typeof type === 'string' ? [type] : type
  return types.includes(kind) || (kind === 'integer' && types.includes('number'))
}

function isOpen (schema: InputSchema): boolean {
  const alternatives = branches(schema)
  if (alternatives !== undefined) return alternatives.some(isOpen)
  return schema.type === undefined && schema.properties === undefined && schema.items === undefined
}

/** The branch that describes values of `kind` (the schema itself when it is not a union). */
function branchFor (schema: InputSchema, kind: Kind): InputSchema | undefined {
  const alternatives = branches(schema)
  if (alternatives === undefined) return names(schema, kind) || (kind === 'object' && schema.properties !== undefined) ? schema : undefined
  for (const branch of alternatives) {
    const found = branchFor(branch, kind)
    if (found !== undefined) return found
  }
  return undefined
}

/** How the adapter's raw values spell things. */
export interface NormaliseOptions {
  /** An empty string where the schema expects no string counts as `null` (query strings). */
  emptyIsNull?: boolean
}

function normaliseString (schema: InputSchema, value: string): unknown {
  if (isOpen(schema) || names(schema, 'string')) return value
  if (names(schema, 'boolean') && BOOLEAN.test(value)) return value.toLowerCase() === 'true'
  if (names(schema, 'integer') && DIGITS.test(value)) {
    const number = Number(value)
    if (Number.isSafeInteger(number)) return number
  }
  const list = branchFor(schema, 'array')
  if (list !== undefined) return [list.items === undefined ? value : normaliseString(list.items, value)]
  return value
}

function normaliseObject (schema: InputSchema, value: Record<string, unknown>, options: NormaliseOptions): Record<string, unknown> {
  const properties = schema.properties ?? {}
  const required = schema.required ?? []
  const result: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) {
    const property = properties[key]
    if (property === undefined) {
      result[key] = item
      continue
    }
    // Where no string is expected, "" is null: in a query string always, in a body where the
    // field may be null, over REST and WebSocket alike (issue #23; Ajv's coercion read it so).
    const empty = item === '' && !isOpen(property) && !names(property, 'string') &&
      (options.emptyIsNull === true || names(property, 'null'))
    const given = empty ? null : item
    if (given === null && !required.includes(key)) continue
    result[key] = normalise(property, given, options)
  }
  return result
}

/**
 * Returns `value` with the R12 rules applied as `schema` describes it; the input is not changed.
 *
 * @example
 * normaliseInput(TokenCreateBody, { userId: '2', actions: 'GetDevice', networkIds: null })
 * // { userId: 2, actions: ['GetDevice'] }
 * normaliseInput(DeleteQuery, { force: 'False' }) // { force: false }
 * normaliseInput(ListQuery, { take: '', name: '' }, { emptyIsNull: true }) // { name: '' }
 */
export function normaliseInput (schema: object, value: unknown, options: NormaliseOptions = {}): unknown {
  return normalise(schema as InputSchema, value, options)
}

function normalise (schema: InputSchema, value: unknown, options: NormaliseOptions): unknown {
  if (typeof value === 'string') return normaliseString(schema, value)
  if (Array.isArray(value)) {
    const list = branchFor(schema, 'array')
    if (list?.items === undefined) return value
    const items = list.items
    return value.map((item) => normalise(items, item, options))
  }
  if (value !== null && typeof value === 'object') {
    const object = branchFor(schema, 'object')
    return object === undefined ? value : normaliseObject(object, value as Record<string, unknown>, options)
  }
  return value
}
