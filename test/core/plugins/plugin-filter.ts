import t from 'tap'
import { DeviceHubError } from '../../../lib/core/errors.js'
import { NO_RETURN_FLAG_MESSAGE, buildPluginFilter } from '../../../lib/core/plugins/plugin-filter.js'

t.test('buildPluginFilter builds <kinds>/<networkIds>/<deviceTypeIds>/<deviceId>/<names>', async (t) => {
  t.same(buildPluginFilter({}), { filter: '*/*/*/*/*', given: false, networkIds: [], deviceTypeIds: [], deviceId: undefined })
  t.same(buildPluginFilter({ deviceId: ' dev-1 ', networkIds: '3,1,3', deviceTypeIds: '2', names: 'x,y', returnUpdatedCommands: 'true', returnNotifications: 'true' }), {
    filter: 'command_update,notification/3,1/2/dev-1/x,y',
    given: true,
    networkIds: [3, 1],
    deviceTypeIds: [2],
    deviceId: 'dev-1'
  })
  t.equal(buildPluginFilter({ returnNotifications: 'false' }).filter, 'command,command_update/*/*/*/*')
  t.equal(buildPluginFilter({ returnNotifications: 'false' }).given, true)
  t.equal(buildPluginFilter({ returnCommands: 'TRUE', returnNotifications: false }).filter, 'command/*/*/*/*', 'R12: any letter case, or a boolean')
})

t.test('buildPluginFilter rejects malformed parameters with 400', async (t) => {
  const cases: Array<[Parameters<typeof buildPluginFilter>[0], string]> = [
    [{ returnCommands: 'false', returnUpdatedCommands: 'false', returnNotifications: 'false' }, NO_RETURN_FLAG_MESSAGE],
    [{ returnCommands: 'yes' }, 'Invalid request parameters'],
    [{ returnCommands: '' }, 'Invalid request parameters'],
    [{ networkIds: '1;2' }, 'Invalid request parameters'],
    [{ networkIds: ',' }, 'Invalid request parameters'],
    [{ deviceTypeIds: '0x10' }, 'Invalid request parameters'],
    [{ deviceId: 'a,b' }, 'Invalid request parameters'],
    [{ names: 'ok,a/b' }, 'Invalid request parameters']
  ]
  for (const [query, message] of cases) {
    t.throws(() => buildPluginFilter(query), new DeviceHubError('VALIDATION_FAILED', message), JSON.stringify(query))
  }
})
