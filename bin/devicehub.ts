#!/usr/bin/env node
import { createCli } from '../lib/cli/create-cli.js'

createCli().parseAsync(process.argv).catch((error: unknown) => {
  process.stderr.write(`devicehub: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exitCode = 1
})
