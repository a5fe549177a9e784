/** Counts per key: a key is present exactly while its count is above zero. */
import t from 'tap'
import { countDown, countUp } from '../../lib/core/key-counts.js'

t.test('a key stays while counted, and goes at zero', async (t) => {
  const counts = new Map<string, number>()
  countUp(counts, 'a')
  countUp(counts, 'a')
  countUp(counts, 'b')
  t.same([...counts], [['a', 2], ['b', 1]])
  countDown(counts, 'a')
  t.equal(counts.get('a'), 1, 'one left')
  countDown(counts, 'a')
  t.notOk(counts.has('a'), 'gone at zero')
  countDown(counts, 'missing')
  t.notOk(counts.has('missing'), 'counting down an absent key leaves it absent, never negative')
  t.equal(counts.get('b'), 1, 'other keys untouched')
})
