#!/usr/bin/env node
import { unsupportedNodeMessage } from '../lib/cli/node-support.js'

// Check the Node.js line before anything else loads: on another line the native SQLite driver
// could crash the process instead of failing with a message.
const refusal = unsupportedNodeMessage()
if (refusal !== undefined) {
  process.stderr.write(refusal + '\n')
  process.exit(1)
}
const { createCli } = await import('../lib/cli/create-cli.js')
createCli().parseAsync(process.argv).catch((error: unknown) => {
  process.stderr.write(`devicehub: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exitCode = 1
})
