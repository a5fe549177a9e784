/**
 * The user-visible configuration (spec §4, D3). The JWT secret is not configuration: its name
 * behaves as if absent on read and delete, and cannot be written.
 */
import { Action } from '../auth/actions.js'
import { requireAction } from '../auth/permissions.js'
import type { Principal } from '../auth/principal.js'
import { badRequest, forbidden, notFound } from '../errors.js'
import type { Store } from '../ports.js'
import { requireBody, validationMessage } from '../validation.js'
import type { ConfigurationRecord } from './configuration-ports.js'
import type { ConfigurationView } from './configuration-schemas.js'

/** Names that exist only inside the server (D3). */
const RESERVED_NAMES = new Set(['jwt.secret'])

export type { ConfigurationView } from './configuration-schemas.js'

export interface ConfigurationService {
  get(principal: Principal | undefined, name: string): Promise<ConfigurationView>
  put(principal: Principal | undefined, name: string, body: { value?: unknown } | undefined): Promise<ConfigurationView>
  delete(principal: Principal | undefined, name: string): Promise<void>
}

function notFoundError (name: string): Error {
  return notFound(`Requested config with name = ${name} not found in the database`)
}

function view (row: ConfigurationRecord): ConfigurationView {
  return { name: row.name, value: row.value, entityVersion: row.entityVersion }
}

export function createConfigurationService (store: Store): ConfigurationService {
  return {
    async get (principal, name) {
      requireAction(principal, Action.ManageConfiguration)
      const row = RESERVED_NAMES.has(name) ? undefined : await store.configuration.get(name)
      if (row === undefined) throw notFoundError(name)
      return view(row)
    },

    async put (principal, name, body) {
      requireAction(principal, Action.ManageConfiguration)
      if (name.length < 1 || name.length > 32) {
        throw badRequest("Name cannot be empty. The name's length should not be more than 32 symbols.")
      }
      if (RESERVED_NAMES.has(name)) throw forbidden()
      const { value } = requireBody(body)
      const text = typeof value === 'number' || typeof value === 'boolean' ? String(value) : value
      if (typeof text !== 'string' || text.length < 1 || text.length > 128) {
        throw badRequest(validationMessage([{
          property: 'value', value: text, message: 'Value cannot be empty. The length of value should be from 1 to 128 symbols.'
        }]))
      }
      return view(await store.configuration.put(name, text))
    },

    async delete (principal, name) {
      requireAction(principal, Action.ManageConfiguration)
      if (RESERVED_NAMES.has(name) || !(await store.configuration.delete(name))) throw notFoundError(name)
    }
  }
}
