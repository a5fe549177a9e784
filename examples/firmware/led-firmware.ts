/**
 * Stand-in for the firmware under test: what a small device does over plain HTTP with the URL
 * and token it was given. It long-polls its commands, answers `set-led` and reports the LED
 * state as a notification. (Real firmware is C on a board; the test around it is the point.)
 */
export function startLedFirmware (config: { url: string, deviceId: string, token: string }): { stop: () => Promise<void> } {
  const controller = new AbortController()
  const headers = { authorization: `Bearer ${config.token}`, 'content-type': 'application/json' }
  const device = `${config.url}/device/${config.deviceId}`
  const loop = (async () => {
    let cursor = new Date().toISOString()
    while (!controller.signal.aborted) {
      const response = await fetch(`${device}/command/poll?waitTimeout=30&timestamp=${cursor}`, { headers, signal: controller.signal }).catch(() => null)
      if (response === null || !response.ok) continue
      for (const command of await response.json() as Array<{ id: number, command: string, timestamp: string, parameters: { on?: boolean } }>) {
        cursor = command.timestamp
        const ok = command.command === 'set-led' && typeof command.parameters?.on === 'boolean'
        await fetch(`${device}/command/${command.id}`, { method: 'PUT', headers, body: JSON.stringify(ok ? { status: 'done', result: { on: command.parameters.on } } : { status: 'rejected' }) })
        if (ok) await fetch(`${device}/notification`, { method: 'POST', headers, body: JSON.stringify({ notification: 'led', parameters: { on: command.parameters.on } }) })
      }
    }
  })()
  return { stop: async () => { controller.abort(); await loop } }
}
