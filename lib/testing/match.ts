/** Notification matchers of the test rig: a name, a predicate or a partial object. */
import type { NotificationView } from '../client/rest-client.js'

/** A partial object matches when every key it gives matches, recursively; arrays match exactly. */
export type DeepPartial<T> = { [K in keyof T]?: T[K] extends object | null ? DeepPartial<T[K]> | T[K] : T[K] }

export type NotificationMatcher = string | ((notification: NotificationView) => boolean) | DeepPartial<NotificationView>

export function matches (matcher: NotificationMatcher, notification: NotificationView): boolean {
  if (typeof matcher === 'string') return notification.notification === matcher
  if (typeof matcher === 'function') return matcher(notification)
  return isSubset(matcher, notification)
}

function isSubset (expected: unknown, actual: unknown): boolean {
  if (expected === actual) return true
  if (typeof expected !== 'object' || expected === null || typeof actual !== 'object' || actual === null) return false
  if (Array.isArray(expected)) {
    return Array.isArray(actual) && expected.length === actual.length && expected.every((e, i) => isSubset(e, actual[i]))
  }
  return Object.entries(expected).every(([key, value]) => isSubset(value, (actual as Record<string, unknown>)[key]))
}

/** How a matcher reads in an error message. */
export function describeMatcher (matcher: NotificationMatcher): string {
  if (typeof matcher === 'string') return `'${matcher}'`
  if (typeof matcher === 'function') return `matching ${matcher.name === '' ? 'the predicate' : matcher.name}`
  return `matching ${JSON.stringify(matcher)}`
}
