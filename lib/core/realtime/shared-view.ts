/**
 * One view per record: an event hands the same record to every stream it reaches (10,000
 * WebSocket subscriptions, parked polls), so the view is formatted once and, being the same
 * object, serialised once by the transports that cache by object.
 */

/**
 * Wraps a view function so that each record object gets one view, kept while the record lives.
 *
 * @example
 * const sharedView = sharedViews(notificationView)
 * sharedView(record) === sharedView(record) // true
 */
export function sharedViews<R extends object, V> (view: (record: R) => V): (record: R) => V {
  const views = new WeakMap<R, V>()
  return (record) => {
    let shared = views.get(record)
    if (shared === undefined) {
      shared = view(record)
      views.set(record, shared)
    }
    return shared
  }
}
