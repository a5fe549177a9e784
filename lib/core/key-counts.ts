/**
 * Counts per key in a `Map` that holds only keys counted above zero, so `has(key)` answers
 * "any under way?" (writes of a device in flight, open connections, batches holding a key).
 */

/**
 * One more of `key`.
 *
 * @example
 * const writing = new Map<string, number>()
 * countUp(writing, 'dev-1') // writing.get('dev-1') === 1
 */
export function countUp<K> (counts: Map<K, number>, key: K): void {
  counts.set(key, (counts.get(key) ?? 0) + 1)
}

/**
 * One less of `key`; the key goes at zero.
 *
 * @example
 * countDown(writing, 'dev-1') // writing.has('dev-1') === false
 */
export function countDown<K> (counts: Map<K, number>, key: K): void {
  const left = (counts.get(key) ?? 1) - 1
  if (left > 0) counts.set(key, left)
  else counts.delete(key)
}
