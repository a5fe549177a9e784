import t from 'tap'
import type { BusEvent, MessageEvent } from '../../../lib/core/realtime/bus.js'
import { createRouter } from '../../../lib/core/realtime/router.js'
import type { RoutedEvent } from '../../../lib/core/realtime/router.js'
import { createMemoryDoorbell } from '../../../lib/core/realtime/memory-doorbell.js'

const RESYNC: BusEvent = { kind: 'resync' }

const event = (fields: Partial<MessageEvent>): MessageEvent =>
  ({ kind: 'notification', id: 1, deviceId: 'd1', networkId: 1, deviceTypeId: 1, name: 'n', ...fields })

t.test('events reach only the listeners registered for their device, network, device type or kind', async (t) => {
  const doorbell = createMemoryDoorbell()
  const router = createRouter(doorbell)
  const got: Record<string, number[]> = {}
  const listen = (name: string) => (e: RoutedEvent): void => { (got[name] ??= []).push('id' in e ? e.id : 0) }
  const offs = [
    router.register({ kinds: ['notification'], deviceIds: ['d1', 'd2'] }, listen('devices')),
    router.register({ kinds: ['notification'], networkIds: [2] }, listen('network2')),
    router.register({ kinds: ['notification'], networkIds: 'all', deviceTypeIds: [3] }, listen('type3')),
    router.register({ kinds: ['notification'], networkIds: 'all', deviceTypeIds: 'all' }, listen('any')),
    router.register({ kinds: ['command', 'command-update'], deviceIds: ['d1'] }, listen('commands')),
    router.register({ kinds: ['notification'], deviceIds: [] }, listen('nothing'))
  ]
  t.equal(router.size, 6)
  t.equal(doorbell.size, 1, 'one doorbell listener for every registration')
  await doorbell.publish(event({ id: 1 }))
  await doorbell.publish(event({ id: 2, deviceId: 'd2', networkId: 2 }))
  await doorbell.publish(event({ id: 3, deviceId: 'd9', networkId: 2, deviceTypeId: 3 }))
  await doorbell.publish(event({ id: 4, deviceId: 'd9', networkId: null, deviceTypeId: null }))
  await doorbell.publish(event({ id: 5, kind: 'command' }))
  await doorbell.publish(event({ id: 6, kind: 'command-update' }))
  await doorbell.publish(event({ id: 7, kind: 'command-update', deviceId: 'd2' }))
  t.same(got, { devices: [1, 2], network2: [2, 3], type3: [3], any: [1, 2, 3, 4], commands: [5, 6] })

  await doorbell.publish(RESYNC)
  t.same(Object.fromEntries(Object.entries(got).map(([k, v]) => [k, v.length])), { devices: 3, network2: 3, type3: 2, any: 5, commands: 3, nothing: 1 },
    'a resync reaches every listener')

  offs[0]!()
  offs[0]!()
  await doorbell.publish(event({ id: 8 }))
  t.same(got.devices, [1, 2, 0], 'unregistered (idempotent)')
  for (const off of offs) off()
  t.equal(router.size, 0)
  t.equal(doorbell.size, 0, 'the router leaves the bus with its last listener')
})

t.test('a throwing listener does not stop delivery', async (t) => {
  const doorbell = createMemoryDoorbell()
  const router = createRouter(doorbell)
  const seen: number[] = []
  const offA = router.register({ kinds: ['notification'] }, () => { throw new Error('boom') })
  const offB = router.register({ kinds: ['notification'] }, (e) => { if (e.kind === 'notification') seen.push(e.id) })
  await doorbell.publish(event({ id: 9 }))
  t.same(seen, [9])
  offA()
  offB()
})

t.test('each resync is a fresh event object with its own reads, shared within one resync only', async (t) => {
  const doorbell = createMemoryDoorbell()
  const router = createRouter(doorbell)
  const resyncs: RoutedEvent[] = []
  const offs = [
    router.register({ kinds: ['notification'] }, (e) => { resyncs.push(e) }),
    router.register({ kinds: ['command'], deviceIds: ['d'] }, (e) => { resyncs.push(e) })
  ]
  await doorbell.publish(RESYNC)
  t.equal(resyncs.length, 2, 'every listener, whatever its keys')
  t.equal(resyncs[0], resyncs[1], 'one object for the listeners of one resync')
  await doorbell.publish(RESYNC)
  t.not(resyncs[0], resyncs[2], 'a fresh object per resync')
  t.not(resyncs[0], RESYNC)
  t.not((resyncs[0] as { reads: unknown }).reads, (resyncs[2] as { reads: unknown }).reads, 'reads are not shared across resyncs')
  for (const off of offs) off()
})

t.test('a revoke reaches every listener, whatever its routing keys', async (t) => {
  const doorbell = createMemoryDoorbell()
  const router = createRouter(doorbell)
  const seen: string[] = []
  const offs = [
    router.register({ kinds: ['notification'], deviceIds: ['d1'] }, (e) => { seen.push(`devices:${e.kind}`) }),
    router.register({ kinds: ['command'], networkIds: [5] }, (e) => { seen.push(`network:${e.kind}`) })
  ]
  await doorbell.publish({ kind: 'revoke', userId: 3, what: 'rights' })
  t.same(seen.sort(), ['devices:revoke', 'network:revoke'])
  for (const off of offs) off()
})

t.test('a plugin event reaches the listeners of its kind only', async (t) => {
  const doorbell = createMemoryDoorbell()
  const router = createRouter(doorbell)
  const seen: string[] = []
  const offs = [
    router.register({ kinds: ['plugin'] }, (e) => { seen.push(`plugin:${e.kind}`) }),
    router.register({ kinds: ['notification'] }, (e) => { seen.push(`notification:${e.kind}`) })
  ]
  await doorbell.publish({ kind: 'plugin', pluginId: 1, topic: 'plugin_topic_a' })
  t.same(seen, ['plugin:plugin'])
  for (const off of offs) off()
})
