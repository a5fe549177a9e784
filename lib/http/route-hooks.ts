/**
 * Hooks that belong to one route, added from an `onRoute` hook where the route is declared. A
 * check that only some routes need (an action, a schema to normalise against) then runs only
 * for those, and reads what it needs once, at declaration, instead of building
 * `request.routeOptions` (a getter that allocates an object per call) on every request.
 */

/**
 * A route option's hooks as a new array (Fastify accepts one function or an array). Assign the
 * result, never push into the declared array: Fastify copies a GET route's options for its HEAD
 * route before `onRoute` runs, so an assignment gives each route its hooks exactly once.
 *
 * @example
 * route.preValidation = [...routeHooks(route.preValidation), check]
 */
export function routeHooks<T> (declared: T | T[] | undefined): T[] {
  return declared === undefined ? [] : Array.isArray(declared) ? [...declared] : [declared]
}
