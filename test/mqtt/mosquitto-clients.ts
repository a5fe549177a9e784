/**
 * The real mosquitto_pub / mosquitto_sub binaries against devicehub's MQTT port (issue #25):
 * telemetry in, a pushed notification out, a sleepy device's missed command with a persistent
 * session (`-c -q 1`), and refused credentials. Skipped when the binaries are not installed.
 */
import { spawn, spawnSync } from 'node:child_process'
import t from 'tap'
import { ADMIN, addDeviceWorld, eventually, startMqttHarness } from '../fixtures/mqtt.js'

const installed = ['mosquitto_pub', 'mosquitto_sub'].every((bin) => spawnSync(bin, ['--help']).error === undefined)

interface Run {
  /** Resolves once stdout holds a line matching `pattern`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>
  exited: Promise<{ code: number | null, stdout: string, stderr: string }>
}

function run (bin: string, args: string[]): Run {
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  const listeners = new Set<() => void>()
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString()
    for (const listener of listeners) listener()
  })
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const exited = new Promise<{ code: number | null, stdout: string, stderr: string }>((resolve) => {
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
  return {
    exited,
    waitFor (pattern, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          listeners.delete(check)
          child.kill()
          reject(new Error(`${bin}: no ${String(pattern)} in ${JSON.stringify(stdout)} ${JSON.stringify(stderr)}`))
        }, timeoutMs)
        const check = (): void => {
          const line = stdout.split('\n').find((l) => pattern.test(l))
          if (line === undefined) return
          clearTimeout(timer)
          listeners.delete(check)
          resolve(line)
        }
        listeners.add(check)
        check()
      })
    }
  }
}

t.test('mosquitto_pub and mosquitto_sub', { skip: installed ? false : 'mosquitto_pub / mosquitto_sub not installed' }, async (t) => {
  const h = await startMqttHarness(t)
  const world = await addDeviceWorld(h, 'mosquitto')
  const port = new URL(h.url).port
  const login = ['-h', '127.0.0.1', '-p', port, '-u', ADMIN.login, '-P', ADMIN.password]
  const level = `${world.networkId}/${world.deviceTypeId}/${world.deviceId}`

  await t.test('telemetry published by mosquitto_pub reaches a mosquitto_sub subscriber', async (t) => {
    const sub = run('mosquitto_sub', [...login, '-i', `sub-${process.pid}`, '-t', `dh/notification/${world.networkId}/+/${world.deviceId}/temp`, '-C', '1', '-W', '20', '-v'])
    // mosquitto_sub's output is buffered when piped: the server says when it has subscribed.
    await eventually(() => (h.server.mqtt?.subscriptions ?? 0) >= 1, 10_000)
    const pub = await run('mosquitto_pub', [...login, '-i', `pub-${process.pid}`, '-q', '1', '-t', `dh/notification/${level}/temp`, '-m', '{"celsius":21.5}']).exited
    t.equal(pub.code, 0, pub.stderr)
    const line = await sub.waitFor(/^dh\/notification\//)
    const [topic, ...rest] = line.split(' ')
    t.equal(topic, `dh/notification/${level}/temp`)
    const payload = JSON.parse(rest.join(' '))
    t.equal(payload.action, 'notification/insert')
    t.same(payload.notification.parameters, { celsius: 21.5 })
    t.equal((await sub.exited).code, 0)
  })

  await t.test('a persistent session (-c -q 1) gets the command created while it was away', async (t) => {
    const id = `sleepy-cli-${process.pid}`
    const args = [...login, '-i', id, '-c', '-q', '1', '-t', `dh/command/+/+/${world.deviceId}/#`]
    const first = await run('mosquitto_sub', [...args, '-E']).exited
    t.equal(first.code, 0, first.stderr)
    const command = await h.rest('POST', `/device/${world.deviceId}/command`, { command: 'blink', parameters: { times: 3 } })
    t.equal(command.status, 201)
    const again = run('mosquitto_sub', [...args, '-C', '1', '-W', '20', '-v'])
    const line = await again.waitFor(/^dh\/command\//)
    t.match(line, new RegExp(`^dh/command/${level}/blink `))
    const payload = JSON.parse(line.slice(line.indexOf(' ') + 1))
    t.equal(payload.action, 'command/insert')
    t.equal(payload.command.id, command.body.id)
    t.equal((await again.exited).code, 0)
  })

  await t.test('a wrong password is refused at CONNECT', async (t) => {
    // (Never spawnSync: the server runs in this process.)
    const pub = await run('mosquitto_pub', ['-h', '127.0.0.1', '-p', port, '-u', ADMIN.login, '-P', 'wrong-password', '-t', 'dh/request', '-m', '{}']).exited
    t.not(pub.code, 0)
    t.match(pub.stderr, /bad user name or password|not authori[sz]ed/i)
  })
})
