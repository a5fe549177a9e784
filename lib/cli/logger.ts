/**
 * Log output of `devicehub serve`: JSON lines for machines (the default when stdout is not a
 * terminal), or one readable line per record for people (a terminal, or `--log-format pretty`).
 */
import type { FastifyServerOptions } from 'fastify'
import { PinoPretty } from 'pino-pretty'

export type LogFormat = 'json' | 'pretty'

interface RequestRecord {
  req?: { method?: string, url?: string }
  res?: { statusCode?: number }
  responseTime?: number
}

/**
 * @example
 * const logger = createLoggerOptions({ level: 'info', format: 'pretty' })
 * await startServer({ logger })
 */
export function createLoggerOptions (options: { level: string, format: LogFormat, colour?: boolean }): FastifyServerOptions['logger'] {
  if (options.level === 'silent') return false
  if (options.format === 'json') return { level: options.level }
  const stream = PinoPretty({
    colorize: options.colour ?? false,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,reqId,req,res,responseTime',
    singleLine: true,
    sync: true,
    // A request is one line: method, URL, status and time.
    messageFormat: (log: Record<string, unknown> & RequestRecord, messageKey: string) => {
      if (log.req !== undefined && log.res !== undefined) {
        return `${log.req.method ?? ''} ${log.req.url ?? ''} ${log.res.statusCode ?? ''} ${(log.responseTime ?? 0).toFixed(1)}ms`
      }
      return String(log[messageKey] ?? '')
    }
  })
  return { level: options.level, stream }
}
