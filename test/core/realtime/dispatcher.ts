import t from 'tap'
import { createDispatcher, dispatcherFor } from '../../../lib/core/realtime/dispatcher.js'
import type { DoorbellEvent } from '../../../lib/core/realtime/doorbell.js'
import { createMemoryDoorbell } from '../../../lib/core/realtime/memory-doorbell.js'
import { RESYNC_EVENT } from '../../../lib/doorbells/postgres-doorbell.js'

const event = (fields: Partial<DoorbellEvent>): DoorbellEvent =>
  ({ kind: 'notification', id: 1, deviceId: 'd1', networkId: 1, deviceTypeId: 1, name: 'n', ...fields })

t.test('events reach only the listeners registered for their device, network, device type or kind', async (t) => {
  const doorbell = createMemoryDoorbell()
  const dispatcher = createDispatcher(doorbell)
  const got: Record<string, number[]> = {}
  const listen = (name: string) => (e: DoorbellEvent): void => { (got[name] ??= []).push(e.id) }
  const offs = [
    dispatcher.register({ kinds: ['notification'], deviceIds: ['d1', 'd2'] }, listen('devices')),
    dispatcher.register({ kinds: ['notification'], networkIds: [2] }, listen('network2')),
    dispatcher.register({ kinds: ['notification'], networkIds: 'all', deviceTypeIds: [3] }, listen('type3')),
    dispatcher.register({ kinds: ['notification'], networkIds: 'all', deviceTypeIds: 'all' }, listen('any')),
    dispatcher.register({ kinds: ['command', 'command-update'], deviceIds: ['d1'] }, listen('commands')),
    dispatcher.register({ kinds: ['notification'], deviceIds: [] }, listen('nothing'))
  ]
  t.equal(dispatcher.size, 6)
  t.equal(doorbell.size, 1, 'one doorbell listener for every registration')
  await doorbell.publish(event({ id: 1 }))
  await doorbell.publish(event({ id: 2, deviceId: 'd2', networkId: 2 }))
  await doorbell.publish(event({ id: 3, deviceId: 'd9', networkId: 2, deviceTypeId: 3 }))
  await doorbell.publish(event({ id: 4, deviceId: 'd9', networkId: null, deviceTypeId: null }))
  await doorbell.publish(event({ id: 5, kind: 'command' }))
  await doorbell.publish(event({ id: 6, kind: 'command-update' }))
  await doorbell.publish(event({ id: 7, kind: 'command-update', deviceId: 'd2' }))
  t.same(got, { devices: [1, 2], network2: [2, 3], type3: [3], any: [1, 2, 3, 4], commands: [5, 6] })

  await doorbell.publish(RESYNC_EVENT)
  t.same(Object.fromEntries(Object.entries(got).map(([k, v]) => [k, v.length])), { devices: 3, network2: 3, type3: 2, any: 5, commands: 3, nothing: 1 },
    'a resync reaches every listener')

  offs[0]!()
  offs[0]!()
  await doorbell.publish(event({ id: 8 }))
  t.same(got.devices, [1, 2, 0], 'unregistered (idempotent)')
  for (const off of offs) off()
  t.equal(dispatcher.size, 0)
  t.equal(doorbell.size, 0, 'the dispatcher leaves the doorbell with its last listener')
})

t.test('a throwing listener does not stop delivery; dispatcherFor shares one dispatcher per doorbell', async (t) => {
  const doorbell = createMemoryDoorbell()
  t.equal(dispatcherFor(doorbell), dispatcherFor(doorbell))
  const seen: number[] = []
  const offA = dispatcherFor(doorbell).register({ kinds: ['notification'] }, () => { throw new Error('boom') })
  const offB = dispatcherFor(doorbell).register({ kinds: ['notification'] }, (e) => { seen.push(e.id) })
  await doorbell.publish(event({ id: 9 }))
  t.same(seen, [9])
  offA()
  offB()
})

t.test('each resync is a fresh event object, so reads keyed by it are shared within one resync only', async (t) => {
  const doorbell = createMemoryDoorbell()
  const resyncs: DoorbellEvent[] = []
  const offs = [
    dispatcherFor(doorbell).register({ kinds: ['notification'] }, (e) => { resyncs.push(e) }),
    dispatcherFor(doorbell).register({ kinds: ['command'], deviceIds: ['d'] }, (e) => { resyncs.push(e) })
  ]
  await doorbell.publish(RESYNC_EVENT)
  t.equal(resyncs.length, 2, 'every listener, whatever its keys')
  t.equal(resyncs[0], resyncs[1], 'one object for the listeners of one resync')
  await doorbell.publish(RESYNC_EVENT)
  t.not(resyncs[0], resyncs[2], 'a fresh object per resync')
  t.not(resyncs[0], RESYNC_EVENT)
  for (const off of offs) off()
})

t.test('a revoke reaches every listener, whatever its routing keys', async (t) => {
  const doorbell = createMemoryDoorbell()
  const seen: string[] = []
  const offs = [
    dispatcherFor(doorbell).register({ kinds: ['notification'], deviceIds: ['d1'] }, (e) => { seen.push(`devices:${e.kind}`) }),
    dispatcherFor(doorbell).register({ kinds: ['command'], networkIds: [5] }, (e) => { seen.push(`network:${e.kind}`) })
  ]
  await doorbell.publish({ kind: 'revoke', id: 3, deviceId: '', networkId: null, deviceTypeId: null, name: '' })
  t.same(seen.sort(), ['devices:revoke', 'network:revoke'])
  for (const off of offs) off()
})
