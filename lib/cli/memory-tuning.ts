import { setFlagsFromString } from 'node:v8'

/**
 * V8 doubles its young generation (up to 2 x 16 MB) whenever many young objects survive, as at
 * startup and while thousands of long polls park, and does not give it back while the server is
 * busy. Keeping it at its initial size holds 10,000 parked polls under 200 MB (about 25 MB less)
 * for about 10-15% more CPU per request (more frequent scavenges). V8 reads this flag each time
 * it would grow the young generation, so setting it at run time takes effect. Only the CLI does
 * this: a library must not change the V8 flags of the process that embeds it.
 */
export function keepYoungGenerationSmall (): void {
  setFlagsFromString('--semi-space-growth-factor=1')
}
