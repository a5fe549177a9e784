/**
 * The rig starts and stops 50 times in one process and leaves nothing running: no server, no
 * socket, no timer. (Start time is reported by `bench/rig-start.ts`, not asserted here.)
 */
import t from 'tap'
import { createTestRig } from '../../lib/testing/index.js'

const handles = (): string[] => process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap').sort()

/** The handles of each kind beyond what `before` held: what the rig left running. */
function leftOver (before: string[]): string[] {
  const left = [...handles()]
  for (const kind of before) {
    const i = left.indexOf(kind)
    if (i >= 0) left.splice(i, 1)
  }
  return left
}

t.test('50 starts and stops leak no handles', async (t) => {
  // What is open before may end meanwhile (the TypeScript loader's connect and file reads at
  // start-up): only what is open at the end and was not before counts.
  const before = handles()
  for (let i = 0; i < 50; i++) {
    const rig = await createTestRig()
    const device = await rig.simulateDevice(`d-${i}`, () => ({ ok: true }))
    await device.command('ping', {}, { timeout: 3000 })
    await device.notify('n')
    await device.expectNotification('n')
    await rig.close()
  }
  // Sockets closed by the server are released on the next turns of the loop.
  for (let i = 0; i < 50 && leftOver(before).length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20))
  t.same(leftOver(before), [], 'no handle open that was not open before the first start')
})

t.test('await using closes the rig', async (t) => {
  let url = ''
  {
    await using rig = await createTestRig()
    url = rig.url
    t.ok((await fetch(`${url}/info`)).ok)
  }
  await t.rejects(fetch(`${url}/info`), 'closed at the end of the block')
})
