export const PluginStatus = { ACTIVE: 0, INACTIVE: 1, CREATED: 2 } as const
export type PluginStatus = (typeof PluginStatus)[keyof typeof PluginStatus]

export interface PluginRecord {
  id: number
  name: string
  description: string | null
  topicName: string
  filter: string
  status: PluginStatus
  subscriptionId: number | null
  userId: number
  parameters: Record<string, unknown> | null
}

// The plugins issue grows this interface (create, update, delete, list, count).
export interface PluginRepository {
  findByTopic(topicName: string): Promise<PluginRecord | undefined>
}
