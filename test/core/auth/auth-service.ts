import t from 'tap'
import { UserStatus } from '../../../lib/core/users/user-ports.js'
import { createTestApp } from '../../fixtures/app.js'

t.test('one token gets one shared principal until what it is built from changes', async (t) => {
  const h = await createTestApp(t)
  const networkId = await h.store.networks.insert({ name: 'auth-reuse-net', description: null })
  const other = await h.store.networks.insert({ name: 'auth-reuse-other', description: null })
  // The login token names both networks; the scope is that grant intersected with the assignments.
  const { user, accessToken } = await h.createUser({ networkIds: [networkId, other] })
  await h.store.users.unassignNetwork(user.id, other)
  const first = await h.hub.tokens.authenticate(accessToken)
  t.equal(await h.hub.tokens.authenticate(accessToken), first, 'the same token reuses the principal')
  t.same(first.scope.networkIds, [networkId])

  await h.store.users.assignNetwork(user.id, other)
  const assigned = await h.hub.tokens.authenticate(accessToken)
  t.not(assigned, first, 'an assignment change builds a new principal')
  t.same(assigned.scope.networkIds, [networkId, other])

  await h.store.users.update(user.id, { data: { a: 1 } })
  const updated = await h.hub.tokens.authenticate(accessToken)
  t.not(updated, assigned, 'a user change builds a new principal')
  t.same(updated.kind === 'user' && updated.user.data, { a: 1 })
  await h.store.users.update(user.id, { data: { a: 2 } })
  const changedData = await h.hub.tokens.authenticate(accessToken)
  t.same(changedData.kind === 'user' && changedData.user.data, { a: 2 }, 'data is compared by content')
  t.equal(await h.hub.tokens.authenticate(accessToken), changedData)

  await h.store.users.unassignNetwork(user.id, networkId)
  t.same((await h.hub.tokens.authenticate(accessToken)).scope.networkIds, [other], 'an unassignment is seen at once')

  await h.store.users.update(user.id, { status: UserStatus.LockedOut })
  await t.rejects(h.hub.tokens.authenticate(accessToken), { code: 'UNAUTHENTICATED', message: 'Unauthorized' }, 'a locked user is refused at once')
  await h.store.users.update(user.id, { status: UserStatus.Active })
  await t.rejects(h.hub.tokens.authenticate(accessToken), { code: 'UNAUTHENTICATED' }, 'a status change revoked the token for good')
  const fresh = await h.hub.tokens.issueForUser(user.id)
  t.ok(await h.hub.tokens.authenticate(fresh.accessToken))
  await h.store.users.delete(user.id)
  await t.rejects(h.hub.tokens.authenticate(fresh.accessToken), { code: 'UNAUTHENTICATED' }, 'a deleted user is refused at once')
})

t.test('a deleted network leaves the scope of a remembered principal at once (cascade)', async (t) => {
  const h = await createTestApp(t)
  const networkId = await h.store.networks.insert({ name: 'auth-cascade-net', description: null })
  const { accessToken } = await h.createUser({ networkIds: [networkId] })
  t.same((await h.hub.tokens.authenticate(accessToken)).scope.networkIds, [networkId])
  await h.store.networks.delete(networkId)
  t.same((await h.hub.tokens.authenticate(accessToken)).scope.networkIds, [])
})
