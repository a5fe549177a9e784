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

type Normaliser = (value: unknown) => unknown
type StringRule = (value: string) => unknown

const unchanged = <T>(value: T): T => value

/** What a string becomes where `schema` is expected; decided once per schema node. */
function compileString (schema: InputSchema): StringRule {
  if (isOpen(schema) || names(schema, 'string')) return unchanged
  const boolean = names(schema, 'boolean')
  const integer = names(schema, 'integer')
  const list = branchFor(schema, 'array')
  const item = list === undefined ? undefined : list.items === undefined ? unchanged : compileString(list.items)
  return (value) => {
    if (boolean && BOOLEAN.test(value)) return value.toLowerCase() === 'true'
    if (integer && DIGITS.test(value)) {
      const number = Number(value)
      if (Number.isSafeInteger(number)) return number
    }
    if (item !== undefined) return [item(value)]
    return value
  }
}

interface PropertyRule {
  /** "" counts as null here (see normaliseObject's rule). */
  emptyIsNull: boolean
  required: boolean
  normalise: Normaliser
}

function compileObject (schema: InputSchema, options: NormaliseOptions): (value: Record<string, unknown>) => Record<string, unknown> {
  const required = schema.required ?? []
  // Only the schema's own declared properties (never an inherited name such as `constructor`).
  const rules = new Map<string, PropertyRule>()
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    rules.set(key, {
      // Where no string is expected, "" is null: in a query string always, in a body where the
      // field may be null, over REST and WebSocket alike (issue #23; Ajv's coercion read it so).
      emptyIsNull: !isOpen(property) && !names(property, 'string') && (options.emptyIsNull === true || names(property, 'null')),
      required: required.includes(key),
      normalise: compile(property, options)
    })
  }
  return (value) => {
    const result: Record<string, unknown> = {}
    for (const key of Object.keys(value)) {
      const item = value[key]
      const rule = rules.get(key)
      if (rule === undefined) {
        result[key] = item
        continue
      }
      const given = item === '' && rule.emptyIsNull ? null : item
      if (given === null && !rule.required) continue
      result[key] = rule.normalise(given)
    }
    return result
  }
}

/** The rules for values where `schema` is expected, as one function built from the schema once. */
function compile (schema: InputSchema, options: NormaliseOptions): Normaliser {
  const string = compileString(schema)
  const list = branchFor(schema, 'array')
  const items = list?.items === undefined ? undefined : compile(list.items, options)
  const objectSchema = branchFor(schema, 'object')
  const object = objectSchema === undefined ? undefined : compileObject(objectSchema, options)
  return (value) => {
    if (typeof value === 'string') return string(value)
    if (Array.isArray(value)) return items === undefined ? value : value.map((item) => items(item))
    if (value !== null && typeof value === 'object') return object === undefined ? value : object(value as Record<string, unknown>)
    return value
  }
}

// A memo cache: the normaliser compiled from an immutable schema object (the routes' and the
// WebSocket actions' schemas, a fixed set), per spelling of empty values.
const compiled = new WeakMap<object, { body?: Normaliser, query?: Normaliser }>()

/**
 * Returns `value` with the R12 rules applied as `schema` describes it; the input is not changed.
 * What the schema asks for is worked out once per schema object and remembered, so a request
 * only walks its own value.
 *
 * @example
 * normaliseInput(TokenCreateBody, { userId: '2', actions: 'GetDevice', networkIds: null })
 * // { userId: 2, actions: ['GetDevice'] }
 * normaliseInput(DeleteQuery, { force: 'False' }) // { force: false }
 * normaliseInput(ListQuery, { take: '', name: '' }, { emptyIsNull: true }) // { name: '' }
 */
export function normaliseInput (schema: object, value: unknown, options: NormaliseOptions = {}): unknown {
  let entry = compiled.get(schema)
  if (entry === undefined) compiled.set(schema, entry = {})
  const spelling = options.emptyIsNull === true ? 'query' : 'body'
  const normalise = entry[spelling] ??= compile(schema as InputSchema, options)
  return normalise(value)
}
