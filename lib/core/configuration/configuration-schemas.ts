/**
 * The wire shape of a configuration setting (spec §4, D3): the REST routes serialise and
 * document it; the WebSocket actions send the same view as `configuration`.
 */
import type { Static } from 'typebox'
import { Type } from 'typebox'

/** A setting as read and written. */
export const ConfigurationView = Type.Object({ name: Type.String(), value: Type.String(), entityVersion: Type.Integer() })
export type ConfigurationView = Static<typeof ConfigurationView>
