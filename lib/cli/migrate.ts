import { describeLocation, openStore } from '../store/open-store.js'
import type { CliIo } from './create-cli.js'

export async function migrateStore (location: string, io: CliIo): Promise<void> {
  const store = await openStore(location, { migrate: true })
  await store.close()
  io.out(`Database ${describeLocation(location)} is up to date.`)
}
