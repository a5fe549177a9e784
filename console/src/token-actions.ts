/**
 * The actions a script token may carry, straight from the server's table (lib/core/auth/actions.ts,
 * bundled into the console), so the list never falls behind the server.
 */
import { ADMIN_ONLY_ACTIONS, Action } from '../../lib/core/auth/actions.js'

export interface ActionChoice {
  name: string
  id: number
  /** Only administrators hold it, so only they can put it in a token. */
  adminOnly: boolean
}

/** Every concrete action (not `Any`/`None`), in the server's numbering order. */
export const ACTION_CHOICES: readonly ActionChoice[] = Object.entries(Action)
  .filter(([name]) => name !== 'Any' && name !== 'None')
  .map(([name, id]) => ({ name, id, adminOnly: (ADMIN_ONLY_ACTIONS as readonly number[]).includes(id) }))
  .sort((a, b) => a.id - b.id)

/** What a script that reports sensor data and answers commands needs. */
export const DEFAULT_ACTIONS: readonly string[] = ['GetDevice', 'GetDeviceNotification', 'CreateDeviceNotification', 'GetDeviceCommand', 'UpdateDeviceCommand']
