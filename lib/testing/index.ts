/**
 * `devicehub/testing`: a scriptable devicehub for firmware and integration tests. Depends on no
 * test framework.
 *
 * @example
 * import { createTestRig } from 'devicehub/testing'
 * const rig = await createTestRig()
 * const device = await rig.device('fw-1')           // give device.accessToken to the firmware
 * const done = await device.command('reboot', {}, { timeout: 5000 })
 * await device.expectNotification({ notification: 'booted' })
 * await rig.close()
 */
export { createTestRig } from './test-rig.js'
export { busContract } from './contracts/bus-contract.js'
export type { BusCheck, BusContractSubject } from './contracts/bus-contract.js'
export { messageLogContract } from './contracts/message-log-contract.js'
export type { MessageLogCheck, MessageLogContractSubject, OpenMessageLog } from './contracts/message-log-contract.js'
export type { TestRig, TestRigOptions, DeviceProps, SimulateProps, SimulatedDeviceHandle } from './test-rig.js'
export type { DeviceHandle } from './device-handle.js'
export type { Faults, FaultRecord, FaultKind, FaultScope } from './faults.js'
export type { NotificationMatcher, DeepPartial } from './match.js'
export type { TranscriptEntry, TranscriptFrame } from './transcript.js'
export { createRestClient, RestError } from '../client/rest-client.js'
export type { RestClient, RestClientOptions, CommandView, NotificationView, PollOptions, Exchange } from '../client/rest-client.js'
export { createSimulatedDevice } from '../client/simulated-device.js'
export type { Behaviour, CommandHandler, CommandReply, SimulatedDevice, SimulatedDeviceOptions } from '../client/simulated-device.js'
export { connectWebSocket, WebSocketActionError } from '../client/websocket-client.js'
export type { WebSocketClient, Push } from '../client/websocket-client.js'
export { storeContract } from './contracts/store-contract.js'
export type { StoreContractCheck, StoreContractSubject } from './contracts/store-contract.js'
