/**
 * The depth check every inbound frame and payload passes before it is parsed (readFrame): a text
 * no longer than the limit is not scanned (it cannot be deeper), so the edges must still hold.
 */
import t from 'tap'
import { JSON_TOO_DEEP, MAX_JSON_DEPTH, NUMBER_NOT_FINITE, checkJsonValue, holdsNonFinite, jsonTooDeep } from '../../lib/core/validation.js'
import { readFrame } from '../../lib/http/inbound-frame.js'

const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth)

t.test('jsonTooDeep at the limit and one past it', async (t) => {
  t.notOk(jsonTooDeep(nested(MAX_JSON_DEPTH)), `${MAX_JSON_DEPTH} levels pass`)
  t.ok(jsonTooDeep(nested(MAX_JSON_DEPTH + 1)), `${MAX_JSON_DEPTH + 1} levels are refused`)
  t.ok(jsonTooDeep('['.repeat(MAX_JSON_DEPTH + 1)), 'unclosed brackets count too')
  t.notOk(jsonTooDeep(`"${'['.repeat(MAX_JSON_DEPTH + 5)}"`), 'brackets inside a string do not')
  t.ok(jsonTooDeep('[[[1]]]', 2), 'a small limit: a short text is scanned when it is longer than the limit')
  t.notOk(jsonTooDeep('[[', 2), 'two levels within a limit of two')
})

t.test('readFrame: nested and oversized frames are refused before parsing', async (t) => {
  const deep = readFrame(nested(MAX_JSON_DEPTH + 1), { maxBytes: 1 << 20 })
  t.match(deep, { kind: 'too-deep', message: JSON_TOO_DEEP })
  t.match(readFrame('[[[1]]]', { maxBytes: 1024, maxDepth: 2 }), { kind: 'too-deep' })
  t.match(readFrame(Buffer.alloc(2048, 0x20), { maxBytes: 1024 }), { kind: 'too-big', bytes: 2048 })
  t.match(readFrame('{"value":21.5}', { maxBytes: 1024 }), { kind: 'json', value: { value: 21.5 } })
})

t.test('checkJsonValue: the depth limit, finite numbers, and no stack overflow on a value built deeper than any parser allows', async (t) => {
  const nestedValue = (depth: number, inner: unknown = 1): unknown => {
    let value: unknown = inner
    for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { k: value }
    return value
  }
  t.doesNotThrow(() => checkJsonValue(nestedValue(MAX_JSON_DEPTH)), `${MAX_JSON_DEPTH} levels pass`)
  t.throws(() => checkJsonValue(nestedValue(MAX_JSON_DEPTH + 1)), { message: JSON_TOO_DEEP }, `${MAX_JSON_DEPTH + 1} are refused`)
  t.throws(() => checkJsonValue(nestedValue(1_000_000)), { message: JSON_TOO_DEEP }, 'a million levels: refused, not a RangeError')
  t.throws(() => checkJsonValue({ a: [1, { b: Number.POSITIVE_INFINITY }] }), { message: NUMBER_NOT_FINITE })
  t.throws(() => checkJsonValue({ a: Number.NaN }), { message: NUMBER_NOT_FINITE })
  t.doesNotThrow(() => checkJsonValue({ a: [1, 'x', null, true, { b: -0.5 }] }))
})

t.test('holdsNonFinite: the whole tree, or only down to the levels asked (a querystring: its values and their arrays)', async (t) => {
  t.ok(holdsNonFinite({ a: { b: [1, Number.NEGATIVE_INFINITY] } }, Number.POSITIVE_INFINITY))
  t.notOk(holdsNonFinite({ a: { b: [1, 2.5] }, c: 'x', d: null }, Number.POSITIVE_INFINITY))
  t.ok(holdsNonFinite({ a: [Number.NaN] }, 1), 'an array under a value is looked at')
  t.notOk(holdsNonFinite({ a: [[Number.NaN]] }, 1), 'deeper is not')
  t.ok(holdsNonFinite(Number.POSITIVE_INFINITY, 0))
})
