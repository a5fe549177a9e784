/** Issue #23 over real sockets: `limit` on command and notification polls, `limit=0` = no limit up to --max-take. */
import t from 'tap'
import { createTestApp } from '../../fixtures/app.js'
import { addDevice, call, listen } from '../../fixtures/messaging.js'

type Kind = 'command' | 'notification'
const KINDS: Kind[] = ['command', 'notification']
const BEFORE = '2020-01-01T00:00:00.000'

t.test('limit=0 on command and notification polls is no limit, capped by --max-take', async (t) => {
  const h = await createTestApp(t, { limits: { maxTake: 104 } })
  const base = await listen(t, h)
  const device = await addDevice(h)
  for (const kind of KINDS) {
    const ids: number[] = []
    for (let i = 0; i < 106; i++) ids.push((await call(`${base}/device/${device}/${kind}`, h.adminToken, { method: 'POST', body: { [kind]: `n${i}` } })).body.id)
    const poll = async (path: string, limit: string): Promise<number[]> => {
      const res = await call(`${base}${path}?timestamp=${BEFORE}&waitTimeout=0${limit}`, h.adminToken)
      t.equal(res.status, 200)
      return res.body.map((i: { id: number }) => i.id)
    }
    for (const path of [`/device/${device}/${kind}/poll`, `/device/${kind}/poll`]) {
      t.same(await poll(path, ''), ids.slice(0, 100), `${path}: 100 by default`)
      t.same(await poll(path, '&limit=0'), ids.slice(0, 104), `${path}: limit=0 is no limit, up to --max-take`)
      t.same(await poll(path, '&limit=2'), ids.slice(0, 2), `${path}: limit=2`)
      t.same(await poll(path, '&limit=0&deviceId=' + device), ids.slice(0, 104), `${path}: with the Python client's extra parameters`)
      const negative = await call(`${base}${path}?limit=-1&waitTimeout=0`, h.adminToken)
      t.same([negative.status, negative.body.message], [400, 'Limit can\'t be less than 0.'])
    }
  }
})
