/**
 * Revocation reaches open waits (issue #16), and only where rights shrink (D11, issue 23). A
 * loss of rights publishes a `revoke` event for that one user in its write transaction: its role
 * lowered, its status leaving ACTIVE, its deletion, a network or device type it actually had
 * unassigned or deleted. Everything that waits on the bus for a principal (parked long
 * polls, WebSocket subscriptions, event streams) checks each `revoke` with
 * {@link revokesPrincipal} and stops: a poll answers `[]` at once, a socket closes with 1008,
 * so the client's next request is authenticated again under the new rights.
 *
 * A password change is not a loss of rights but of trust in the old tokens: {@link revokeTokens}
 * ends the waits of the user's own tokens except the one that made the change, and leaves its
 * plugins' waits alone (plugin tokens are not login credentials; deleting the plugin ends them).
 * The bus carries every event to every instance (PostgreSQL NOTIFY), only after commit.
 */
import type { Store } from '../ports.js'
import type { PluginRecord } from '../plugins/plugin-ports.js'
import type { Bus, BusEvent } from '../realtime/bus.js'
import type { Principal } from './principal.js'
import { tokenId } from './token-id.js'

/**
 * `revoke` for every user. Nothing rings it any more (a deleted network or device type revokes
 * only the users that had it); listeners still honour it, so a mixed-version cluster agrees.
 */
export const EVERY_USER = 0

/** The user whose rights a principal carries (the owner's, for a plugin); undefined for the system principal. */
export function principalUserId (principal: Principal | undefined): number | undefined {
  if (principal === undefined) return undefined
  return principal.kind === 'user' ? principal.user.id : principal.kind === 'plugin' ? principal.owner.id : undefined
}

/**
 * Publishes `revoke` for `userId` (or {@link EVERY_USER}); inside `tx` when given, so
 * it is heard only if the change commits.
 *
 * @example
 * await store.transaction(async (tx) => { await tx.users.update(id, { role: 1 }); await revokeUser(bus, id, tx) })
 */
export async function revokeUser (bus: Bus, userId: number, tx?: Store): Promise<void> {
  await bus.publish({ kind: 'revoke', userId, what: 'rights' }, tx)
}

/**
 * Whether a bus event revokes what `userId` was granted (the id of {@link principalUserId};
 * undefined, the system principal, is never revoked).
 *
 * @example
 * bus.subscribe((event) => { if (revokes(event, userId)) subscription.close() })
 */
export function revokes (event: BusEvent, userId: number | undefined): boolean {
  // A revoke naming a plugin concerns that plugin's tokens only, not its owner's own; a password
  // change concerns tokens, not rights (see revokesPrincipal).
  return event.kind === 'revoke' && event.what === 'rights' && userId !== undefined &&
    (event.userId === EVERY_USER || event.userId === userId)
}

/**
 * Publishes `revoke` for a password change of `userId` (D11): its tokens are revoked (the store moved
 * its token version), except the one named by `keptTokenId` (auth/token-id.ts), the token of
 * the caller that changed its own password. Open waits of that token go on, on every instance.
 *
 * @example
 * await store.transaction(async (tx) => {
 *   await tx.users.update(id, { passwordHash, keepToken })
 *   await revokeTokens(bus, id, keepToken, tx)
 * })
 */
export async function revokeTokens (bus: Bus, userId: number, keptTokenId: string | undefined, tx?: Store): Promise<void> {
  await bus.publish({ kind: 'revoke', userId, what: 'tokens', keptTokenId: keptTokenId ?? '' }, tx)
}

/**
 * Publishes `revoke` for one plugin's tokens (issue 22): its reach narrowed or it was deleted. The
 * event names the owner (`userId`) and the plugin's topic, so the owner's own waits go on.
 *
 * @example
 * await store.transaction(async (tx) => { await tx.plugins.delete(plugin.id); await revokePlugin(bus, plugin, tx) })
 */
export async function revokePlugin (bus: Bus, plugin: Pick<PluginRecord, 'userId' | 'topicName'>, tx?: Store): Promise<void> {
  await bus.publish({ kind: 'revoke', userId: plugin.userId, what: 'plugin', topic: plugin.topicName }, tx)
}

/**
 * Whether a bus event revokes what `principal` was granted: {@link revokes} for its
 * user (a plugin's owner included), a plugin revocation for the tokens of that plugin, and a
 * password change for the user's own tokens but the one it spared ({@link revokeTokens}).
 *
 * @example
 * bus.subscribe((event) => { if (revokesPrincipal(event, principal)) subscription.close() })
 */
export function revokesPrincipal (event: BusEvent, principal: Principal | undefined): boolean {
  if (event.kind !== 'revoke') return false
  if (event.what === 'plugin') return principal?.kind === 'plugin' && principal.plugin.topicName === event.topic
  if (event.what === 'rights') return revokes(event, principalUserId(principal))
  // A password change: the user's own tokens but the one that made it; plugins go on.
  if (principal?.kind !== 'user' || principal.user.id !== event.userId) return false
  return event.keptTokenId === '' || tokenId(principal.token) !== event.keptTokenId
}
