import t from 'tap'
import { createPluginPrincipal, createUserPrincipal } from '../../../lib/core/auth/principal.js'
import { EVERY_USER, revokeTokens, revokes, revokesPrincipal } from '../../../lib/core/auth/revocations.js'
import { tokenId } from '../../../lib/core/auth/token-id.js'
import type { PluginRecord } from '../../../lib/core/plugins/plugin-ports.js'
import type { BusEvent } from '../../../lib/core/realtime/bus.js'
import { createMemoryDoorbell } from '../../../lib/core/realtime/memory-doorbell.js'
import type { UserRecord } from '../../../lib/core/users/user-ports.js'

const owner: UserRecord = {
  id: 5, login: 'owner', passwordHash: 'x', role: 1, status: 0, loginAttempts: 0, lastLogin: null, data: null, introReviewed: false, allDeviceTypesAvailable: true, tokenVersion: 0
}
const plugin = (topicName: string): PluginRecord => ({
  id: 1, name: 'p', description: null, topicName, filter: '*/*/*/*/*', status: 0, subscriptionId: null, activationCursor: null, userId: 5, parameters: null,
  grants: { networkIds: 'all', deviceTypeIds: 'all' }
})
const none = { networkIds: [], deviceTypeIds: [] }
const user = createUserPrincipal(owner, { u: 5, a: [0], n: ['*'], dt: ['*'], e: 1, t: 1 }, none)
const mine = createPluginPrincipal(plugin('plugin_topic_a'), owner, { tpc: 'plugin_topic_a', a: [0], e: 1, t: 1 }, none)
const sibling = createPluginPrincipal(plugin('plugin_topic_b'), owner, { tpc: 'plugin_topic_b', a: [0], e: 1, t: 1 }, none)
const revoke = (userId: number, topic = ''): BusEvent => topic === ''
  ? { kind: 'revoke', userId, what: 'rights' }
  : { kind: 'revoke', userId, what: 'plugin', topic }

t.test('a user revoke reaches the user and every plugin it owns', async (t) => {
  t.ok(revokesPrincipal(revoke(5), user))
  t.ok(revokesPrincipal(revoke(5), mine))
  t.ok(revokesPrincipal(revoke(EVERY_USER), sibling))
  t.notOk(revokesPrincipal(revoke(6), mine))
  t.notOk(revokesPrincipal(revoke(5), undefined), 'never the system principal')
})

t.test('a plugin revoke (named by topic) reaches that plugin\'s tokens only', async (t) => {
  const event = revoke(5, 'plugin_topic_a')
  t.ok(revokesPrincipal(event, mine))
  t.notOk(revokesPrincipal(event, sibling), 'another plugin of the same owner goes on')
  t.notOk(revokesPrincipal(event, user), 'the owner\'s own waits go on')
  t.notOk(revokes(event, 5), 'nor does the user-level check take it for the owner\'s')
  t.notOk(revokesPrincipal({ kind: 'plugin', pluginId: 1, topic: 'plugin_topic_a' }, mine), 'only revoke events')
})

t.test('a password change revokes the user\'s other tokens, not the one that made it, nor its plugins', async (t) => {
  const doorbell = createMemoryDoorbell()
  const heard: BusEvent[] = []
  doorbell.subscribe((event) => heard.push(event))
  const other = createUserPrincipal(owner, { u: 5, a: [0], n: ['*'], dt: ['*'], e: 2, t: 1 }, none)
  await revokeTokens(doorbell, 5, tokenId(user.token))
  await revokeTokens(doorbell, 5, undefined)
  const [kept, all] = heard
  t.notOk(revokesPrincipal(kept!, user), 'the token that made the change goes on')
  t.ok(revokesPrincipal(kept!, other), 'another token of the user stops')
  t.notOk(revokesPrincipal(kept!, mine), 'a plugin of the user goes on')
  t.notOk(revokes(kept!, 5), 'a password change is not a loss of rights')
  t.ok(revokesPrincipal(all!, user), 'a change by someone else spares no token')
  t.notOk(revokesPrincipal(all!, createUserPrincipal({ ...owner, id: 6 }, { u: 6, a: [0], n: ['*'], dt: ['*'], e: 1, t: 1 }, none)), 'another user goes on')
})
