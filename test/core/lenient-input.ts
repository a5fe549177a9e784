import t from 'tap'
import { Type } from 'typebox'
import { normaliseInput } from '../../lib/core/lenient-input.js'

const Body = Type.Object({
  userId: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  count: Type.Integer(),
  required: Type.Union([Type.String(), Type.Null()]),
  actions: Type.Optional(Type.Union([Type.Array(Type.Unknown()), Type.Null()])),
  networkIds: Type.Optional(Type.Union([Type.Array(Type.Union([Type.String(), Type.Integer()])), Type.Null()])),
  ids: Type.Optional(Type.Array(Type.Integer())),
  name: Type.Optional(Type.String()),
  free: Type.Optional(Type.Unknown()),
  flag: Type.Optional(Type.Boolean()),
  nested: Type.Optional(Type.Object({ inner: Type.Optional(Type.Integer()) })),
  typed: Type.Optional(Type.Unsafe<number | null>({ type: ['integer', 'null'] }))
}, { required: ['count', 'required'] })

t.test('a null in an optional property is the property left out', async (t) => {
  t.same(normaliseInput(Body, { userId: null, networkIds: null, actions: null, name: null, free: null, count: 1, required: null }),
    { count: 1, required: null }, 'required properties keep their null, so the schema still sees it')
  t.same(normaliseInput(Body, { nested: { inner: null } }), { nested: {} }, 'at any depth')
  t.same(normaliseInput(Body, { unknown: null }), { unknown: null }, 'properties the schema does not describe are left alone')
  t.same(normaliseInput(Body, { constructor: null, toString: '' }), { constructor: null, toString: '' },
    'names every object inherits are not declared properties either')
  const input = { count: '1', required: 'x' }
  t.same(normaliseInput(Body, input), { count: 1, required: 'x' }, 'the same schema again: its remembered rules')
  t.same(input, { count: '1', required: 'x' }, 'the input is not changed')
})

t.test('a single string where a list is expected is a list of one', async (t) => {
  t.same(normaliseInput(Body, { actions: 'GetDevice' }), { actions: ['GetDevice'] })
  t.same(normaliseInput(Body, { networkIds: '5' }), { networkIds: ['5'] })
  t.same(normaliseInput(Body, { ids: '5' }), { ids: [5] }, 'and its item is normalised too')
  t.same(normaliseInput(Body, { name: 'x' }), { name: 'x' }, 'not where a string is expected')
})

t.test('booleans in any letter case where a boolean is expected', async (t) => {
  for (const [text, value] of [['True', true], ['FALSE', false], ['true', true], ['fAlSe', false]] as const) {
    t.same(normaliseInput(Body, { flag: text }), { flag: value }, text)
  }
  t.same(normaliseInput(Body, { flag: 'maybe' }), { flag: 'maybe' }, 'anything else is left for the schema to refuse')
  t.same(normaliseInput(Body, { name: 'True' }), { name: 'True' }, 'a string field keeps the text')
})

t.test('digit strings where an integer is expected', async (t) => {
  t.same(normaliseInput(Body, { userId: '2', count: '-3', typed: '7' }), { userId: 2, count: -3, typed: 7 })
  t.same(normaliseInput(Body, { networkIds: ['5', 6] }), { networkIds: ['5', 6] }, 'a string-or-integer list keeps its strings')
  for (const text of ['1.5', '1e3', '0x10', ' 2', '99999999999999999']) {
    t.same(normaliseInput(Body, { userId: text }), { userId: text }, `${JSON.stringify(text)} is left for the schema to refuse`)
  }
  t.same(normaliseInput(Body, { userId: { id: 1 } }), { userId: { id: 1 } }, 'objects are never rewritten')
})

t.test('the input is not changed, and open schemas are left alone', async (t) => {
  const input = { userId: '2', networkIds: null }
  normaliseInput(Body, input)
  t.same(input, { userId: '2', networkIds: null })
  t.same(normaliseInput(Type.Unknown(), { a: null, b: 'True' }), { a: null, b: 'True' })
  t.same(normaliseInput(Body, 'text'), 'text')
  t.same(normaliseInput(Body, null), null)
})

t.test('query strings: an empty value where no string is expected is a null (emptyIsNull)', async (t) => {
  const Query = Type.Object({ take: Type.Optional(Type.Integer()), force: Type.Optional(Type.Boolean()), name: Type.Optional(Type.String()), free: Type.Optional(Type.Unknown()) })
  t.same(normaliseInput(Query, { take: '', force: '', name: '', free: '' }, { emptyIsNull: true }), { name: '', free: '' })
  t.same(normaliseInput(Query, { take: '', force: '' }), { take: '', force: '' }, 'bodies keep their empty strings where null is not allowed (and fail the schema)')
})

t.test('bodies: an empty string where no string is expected but null is, is a null (issue #23)', async (t) => {
  t.same(normaliseInput(Body, { userId: '', typed: '', count: 1, required: '' }), { count: 1, required: '' },
    'a nullable integer (union or type array) reads "" as absent; a nullable string keeps it')
  t.same(normaliseInput(Body, { count: '', name: '', free: '' }), { count: '', name: '', free: '' }, 'not where null is not allowed, a string is, or anything is')
})
