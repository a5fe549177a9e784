/**
 * Plugin management (auth spec §2.7, §4.3, §4.4): a plugin is a named subscription owned by a
 * user, addressed by its topic. Non-admins see and manage only their own plugins; a plugin
 * token manages only its own plugin and never acts for its owner elsewhere.
 */
import { randomUUID } from 'node:crypto'
import { Action } from '../auth/actions.js'
import { requireAction } from '../auth/permissions.js'
import type { Principal } from '../auth/principal.js'
import { grantsOf } from '../auth/principal.js'
import type { ServiceContext } from '../context.js'
import { DeviceHubError, badRequest, forbidden, notFound } from '../errors.js'
import type { JsonObject } from '../ports.js'
import { jsonObjectOrNull, requireBody } from '../validation.js'
import type { PluginDelivery } from './plugin-delivery.js'
import type { PluginFilterQuery } from './plugin-filter.js'
import { buildPluginFilter } from './plugin-filter.js'
import type { PluginFilter, PluginPatch, PluginRecord } from './plugin-ports.js'
import { PluginStatus } from './plugin-ports.js'
import type { PluginCreateBody, PluginRegistration, PluginStatusName, PluginView } from './plugin-schemas.js'
import { checkPluginTargets } from './plugin-targets.js'
import type { PluginTokenService } from './plugin-token-service.js'
import { createPluginTokenService } from './plugin-token-service.js'

export type { PluginCreateBody, PluginRegistration, PluginStatusName, PluginView } from './plugin-schemas.js'

/** `GET /plugin` and `/plugin/count` query parameters after schema validation. */
export interface PluginListQuery {
  name?: string
  namePattern?: string
  topicName?: string
  /** The status ordinal (0 ACTIVE, 1 INACTIVE, 2 CREATED). */
  status?: number
  userId?: number
  sortField?: string
  sortOrder?: string
  take?: number
  skip?: number
}

export interface PluginCreateInput {
  query: PluginFilterQuery
  body: PluginCreateBody | undefined
  /** The WebSocket URL plugins connect to; the HTTP layer derives it from the request. */
  proxyEndpoint: string
}

export interface PluginUpdateQuery extends PluginFilterQuery {
  topicName?: string
  status?: string
  name?: string
  description?: string
  /** A JSON object, as text (it travels in the query string). */
  parameters?: string
}

export interface PluginService extends PluginTokenService {
  list(principal: Principal | undefined, query: PluginListQuery): Promise<PluginView[]>
  count(principal: Principal | undefined, query: PluginListQuery): Promise<{ count: number }>
  /** `POST /plugin`: registers a plugin (status CREATED) and issues its tokens. */
  create(principal: Principal | undefined, input: PluginCreateInput): Promise<PluginRegistration>
  /** `PUT /plugin`: status, name, description, parameters and filter changes. */
  update(principal: Principal | undefined, query: PluginUpdateQuery): Promise<void>
  delete(principal: Principal | undefined, topicName: string | undefined): Promise<void>
}

export const PluginMessages = {
  notFound: 'Plugin is not found',
  noAccess: 'No access to plugin',
  noCurrentUser: 'Can not get current user.',
  activeFilter: "Plugin's subscription filter can't be updated if plugin is ACTIVE",
  createdStatus: 'Plugin status CREATED can not be set; use ACTIVE or INACTIVE'
} as const

const STATUS_NAMES: Record<PluginStatus, PluginStatusName> = { 0: 'ACTIVE', 1: 'INACTIVE', 2: 'CREATED' }
const MAX_TEXT = 128

/**
 * A plugin record as the API shows it: `status` as its name.
 *
 * @example
 * pluginView(record).status // 'CREATED'
 */
export function pluginView (plugin: PluginRecord): PluginView {
  return {
    id: plugin.id,
    name: plugin.name,
    description: plugin.description,
    topicName: plugin.topicName,
    filter: plugin.filter,
    status: STATUS_NAMES[plugin.status],
    subscriptionId: plugin.subscriptionId,
    userId: plugin.userId,
    parameters: plugin.parameters
  }
}

/**
 * @example
 * const plugins = createPluginService(ctx, createPluginDelivery(ctx))
 * const { topicName } = await plugins.create(principal, { query: { returnCommands: 'true' }, body: { name: 'p' }, proxyEndpoint })
 */
export function createPluginService (ctx: ServiceContext, delivery: PluginDelivery): PluginService {
  const { store } = ctx

  /** What a caller may list: owner restriction and, for plugin tokens, their own topic. */
  function listScope (principal: Principal, query: PluginListQuery): { ownerId: number | 'all', filter: PluginFilter } | undefined {
    const filter = parseListFilter(query, ctx.limits.maxTake)
    if (principal.kind === 'system') return { ownerId: 'all', filter }
    const self = principal.kind === 'user' ? principal.user : principal.owner
    if (!principal.isAdmin && filter.userId !== undefined && filter.userId !== self.id) throw forbidden(PluginMessages.noAccess)
    const ownerId = principal.isAdmin ? 'all' : self.id
    if (principal.kind === 'plugin') {
      if (filter.topicName !== undefined && filter.topicName !== principal.plugin.topicName) return undefined
      return { ownerId, filter: { ...filter, topicName: principal.plugin.topicName } }
    }
    return { ownerId, filter }
  }

  /** The plugin a PUT/DELETE addresses (§2.7): 404 for admins, 403 for others, when missing or not owned. */
  async function resolve (principal: Principal, topicName: string | undefined): Promise<PluginRecord> {
    const missing = (): DeviceHubError => principal.isAdmin ? notFound(PluginMessages.notFound) : forbidden(PluginMessages.noAccess)
    if (principal.kind === 'plugin') {
      const own = await store.plugins.findById(principal.plugin.id)
      if (own === undefined) throw missing()
      return own
    }
    if (topicName === undefined || topicName === '') throw missing()
    const plugin = await store.plugins.findByTopic(topicName)
    if (plugin === undefined) throw missing()
    if (principal.kind === 'user' && !principal.isAdmin && plugin.userId !== principal.user.id) throw forbidden(PluginMessages.noAccess)
    return plugin
  }

  return {
    ...createPluginTokenService(ctx),

    async list (principal, query) {
      requireAction(principal, Action.ManagePlugin)
      const scope = listScope(principal, query)
      if (scope === undefined) return []
      return (await store.plugins.list(scope.ownerId, scope.filter)).map(pluginView)
    },

    async count (principal, query) {
      requireAction(principal, Action.ManagePlugin)
      const scope = listScope(principal, query)
      return { count: scope === undefined ? 0 : await store.plugins.count(scope.ownerId, scope.filter) }
    },

    async create (principal, input) {
      requireAction(principal, Action.ManagePlugin)
      if (principal.kind !== 'user') throw new DeviceHubError('CONFLICT', PluginMessages.noCurrentUser)
      const spec = buildPluginFilter(input.query)
      const body = requireBody(input.body)
      const name = requiredText(body.name)
      const description = optionalText(body.description) ?? null
      const parameters = jsonObjectOrNull(body.parameters) ?? null
      await checkPluginTargets(store, principal, spec)
      const topicName = `plugin_topic_${randomUUID()}`
      await store.plugins.insert({
        name,
        description,
        topicName,
        filter: spec.filter,
        status: PluginStatus.CREATED,
        subscriptionId: null,
        activationCursor: null,
        userId: principal.user.id,
        parameters,
        // It never reaches further than the token that registers it (D11).
        grants: grantsOf(principal)
      })
      const tokens = ctx.auth.issuePluginTokens(topicName, [Action.ManagePlugin])
      return { ...tokens, proxyEndpoint: input.proxyEndpoint, topicName }
    },

    async update (principal, query) {
      requireAction(principal, Action.ManagePlugin)
      // DeviceHive's order: the plugin first (404 / 403), then the parameters, then the rule for
      // ACTIVE plugins, and only then the new filter's targets, so an ACTIVE plugin answers the
      // same 400 whatever networks, device types or device the refused filter names.
      const plugin = await resolve(principal, query.topicName)
      const spec = buildPluginFilter(query)
      const status = parseStatusName(query.status)
      const name = query.name === undefined ? undefined : requiredText(query.name)
      const description = optionalText(query.description)
      const parameters = parseParameters(query.parameters)
      // As in DeviceHive, any filter parameter counts as a filter update, even one that rebuilds
      // the same filter; only a change of status lets it through.
      const statusChanged = status !== undefined && status !== plugin.status
      if (plugin.status === PluginStatus.ACTIVE && spec.given && !statusChanged) throw badRequest(PluginMessages.activeFilter)
      if (spec.given) await checkPluginTargets(store, principal, spec)

      const filter = spec.given ? spec.filter : plugin.filter
      const patch: PluginPatch = { filter }
      // A user's token that updates the plugin sets its reach anew (a narrower one narrows it);
      // the plugin's own tokens and the system principal leave it as it is.
      if (principal.kind === 'user') patch.grants = grantsOf(principal)
      if (name !== undefined) patch.name = name
      if (description !== undefined) patch.description = description
      if (parameters !== undefined) patch.parameters = parameters
      // Becoming ACTIVE opens a subscription (delivery assigns its id); staying ACTIVE keeps it.
      if (status === PluginStatus.ACTIVE) patch.status = status
      else if (status === PluginStatus.INACTIVE) {
        patch.status = status
        patch.subscriptionId = null
      }
      // Through delivery: connected plugins see the change at once, on every instance.
      if (!await delivery.update(plugin, patch)) {
        throw principal.isAdmin ? notFound(PluginMessages.notFound) : forbidden(PluginMessages.noAccess)
      }
    },

    async delete (principal, topicName) {
      requireAction(principal, Action.ManagePlugin)
      const plugin = await resolve(principal, topicName)
      // P8: its connections are closed.
      await delivery.delete(plugin)
    }
  }
}

function parseListFilter (query: PluginListQuery, maxTake: number): PluginFilter {
  if (query.status !== undefined && query.status !== 0 && query.status !== 1 && query.status !== 2) throw badRequest()
  let sortField: PluginFilter['sortField']
  if (query.sortField !== undefined) {
    const field = query.sortField.toLowerCase()
    if (field !== 'id' && field !== 'name') throw badRequest()
    sortField = field
  }
  let sortOrder: PluginFilter['sortOrder']
  if (query.sortOrder !== undefined) {
    const order = query.sortOrder.toUpperCase()
    if (order !== 'ASC' && order !== 'DESC') throw badRequest(`Unparseable sort order : ${query.sortOrder}`)
    sortOrder = order
  }
  return {
    name: query.name,
    namePattern: query.namePattern,
    topicName: query.topicName,
    userId: query.userId,
    status: query.status as PluginStatus | undefined,
    sortField,
    sortOrder,
    // R10: no default page size, but never more than the configured maximum.
    take: Math.min(query.take ?? maxTake, maxTake),
    skip: query.skip
  }
}

function parseStatusName (value: string | undefined): PluginStatus | undefined {
  if (value === undefined) return undefined
  const name = value.toUpperCase()
  if (name === 'ACTIVE') return PluginStatus.ACTIVE
  if (name === 'INACTIVE') return PluginStatus.INACTIVE
  if (name === 'CREATED') throw badRequest(PluginMessages.createdStatus)
  throw badRequest()
}

function requiredText (value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > MAX_TEXT) throw badRequest()
  return value
}

function optionalText (value: unknown): string | null | undefined {
  if (value === undefined || value === null) return value
  if (typeof value !== 'string' || value.length > MAX_TEXT) throw badRequest()
  return value
}

/** `parameters` of PUT arrives as JSON text in the query string. */
function parseParameters (text: string | undefined): JsonObject | null | undefined {
  if (text === undefined) return undefined
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw badRequest()
  }
  return jsonObjectOrNull(value)
}
