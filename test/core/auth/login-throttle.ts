/**
 * The login throttle on a fake clock (issue #22): holds are per client address and per login
 * from one address, never per login for everyone; many addresses failing one login raise an alert.
 */
import t from 'tap'
import { addressKey } from '../../../lib/core/auth/client-address.js'
import { createGuessingWatch } from '../../../lib/core/auth/guessing-watch.js'
import type { LoginThrottle } from '../../../lib/core/auth/login-throttle.js'
import { createLoginThrottle } from '../../../lib/core/auth/login-throttle.js'

function fakeClock (): { now: () => number, advance: (ms: number) => void } {
  let now = Date.UTC(2026, 0, 1)
  return { now: () => now, advance: (ms) => { now += ms } }
}

/** One wrong password: the attempt if allowed, then its failure. Returns the wait (0 = it went ahead). */
function guess (throttle: LoginThrottle, login: string, address: string | undefined): number {
  const wait = throttle.attempt(login, address)
  if (wait === 0) throttle.failed(login, address)
  return wait
}

t.test('one address gets 5 guesses at a login, then a back-off doubling up to 15 min', async (t) => {
  const clock = fakeClock()
  const throttle = createLoginThrottle({ clock })
  const waits = Array.from({ length: 7 }, () => guess(throttle, 'dhadmin', '203.0.113.9'))
  t.same(waits.slice(0, 5), [0, 0, 0, 0, 0], 'five free')
  t.same(waits.slice(5), [1000, 1000], 'then held 1 s; held attempts do not count')
  const holds: number[] = []
  for (let i = 0; i < 14; i++) {
    clock.advance(throttle.attempt('dhadmin', '203.0.113.9'))
    guess(throttle, 'dhadmin', '203.0.113.9')
    holds.push(throttle.attempt('dhadmin', '203.0.113.9'))
  }
  t.same(holds.slice(0, 6), [2000, 4000, 8000, 16_000, 32_000, 64_000], 'each failure doubles the hold')
  t.equal(holds.at(-1), 15 * 60_000, 'capped at 15 min')
})

t.test('the right password from an address that has not been guessing goes ahead at once', async (t) => {
  const clock = fakeClock()
  const throttle = createLoginThrottle({ clock })
  // A day of an attacker sending the next guess the moment Retry-After allows it.
  let guesses = 0
  for (let elapsed = 0; elapsed < 24 * 3600_000;) {
    const wait = throttle.attempt('dhadmin', '198.51.100.7')
    if (wait === 0) {
      throttle.failed('dhadmin', '198.51.100.7')
      guesses++
    }
    clock.advance(wait)
    elapsed += wait
    t.equal(throttle.attempt('DHADMIN', '192.0.2.1'), 0)
    throttle.succeeded('DHADMIN', '192.0.2.1')
    if (guesses > 200) break
  }
  t.ok(guesses <= 24 * 4 + 15, `the attacker got ${guesses} guesses in a day (about four an hour)`)
  t.equal(throttle.attempt('dhadmin', '192.0.2.1'), 0, 'the owner is never held back')
})

t.test('one address spraying many logins is held back after 10 failures; one failure is forgotten per minute', async (t) => {
  const clock = fakeClock()
  const throttle = createLoginThrottle({ clock })
  const waits = Array.from({ length: 12 }, (_, i) => guess(throttle, `user-${i}`, '203.0.113.9'))
  t.same(waits.slice(0, 10), Array(10).fill(0), 'ten free across logins')
  t.ok(waits.slice(10).every((w) => w > 0), 'then the address is held for every login')
  t.ok(throttle.attempt('fresh-login', '203.0.113.9') > 0, 'a login it never tried too')
  t.equal(throttle.attempt('fresh-login', '203.0.113.10'), 0, 'a neighbour address is not')
  // Guessing at the pace the hold allows: about one a minute once the back-off has caught up.
  let count = 0
  for (let minute = 0; minute < 60; minute++) {
    const start = clock.now()
    while (clock.now() - start < 60_000) {
      const wait = throttle.attempt(`spray-${count}`, '203.0.113.9')
      if (wait === 0) {
        throttle.failed(`spray-${count}`, '203.0.113.9')
        count++
      } else {
        clock.advance(Math.min(wait, 60_000 - (clock.now() - start)))
      }
    }
  }
  t.ok(count <= 70, `${count} guesses in an hour of spraying`)
  // A quiet spell leaks the failures away: a typo then goes ahead again.
  clock.advance(30 * 60_000)
  t.equal(throttle.attempt('someone', '203.0.113.9'), 0, 'the address is free again after a quiet spell')
})

t.test('parallel guesses cannot slip past the hold: an attempt counts before its password is checked', async (t) => {
  const clock = fakeClock()
  const throttle = createLoginThrottle({ clock })
  // Thirty attempts in flight at once: none has failed yet when the next is checked.
  const waits = Array.from({ length: 30 }, () => throttle.attempt('dhadmin', '203.0.113.9'))
  t.equal(waits.filter((w) => w === 0).length, 5, 'only the free five go ahead')
})

t.test('a success clears its pair and takes back its own count of the address, not the earlier ones', async (t) => {
  const clock = fakeClock()
  const throttle = createLoginThrottle({ clock, freePerAddress: 3 })
  guess(throttle, 'a', '203.0.113.9')
  guess(throttle, 'b', '203.0.113.9')
  t.equal(throttle.attempt('mine', '203.0.113.9'), 0)
  throttle.succeeded('mine', '203.0.113.9')
  t.equal(throttle.attempt('mine', '203.0.113.9'), 0, 'its own count was taken back (third failure free)')
  throttle.succeeded('mine', '203.0.113.9')
  guess(throttle, 'c', '203.0.113.9')
  t.ok(throttle.attempt('d', '203.0.113.9') > 0, 'the earlier failures still count: a known password does not reset the address')
})

t.test('IPv6 addresses count per /64; IPv4-mapped addresses as IPv4; no address as one shared key', async (t) => {
  t.equal(addressKey('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64')
  t.equal(addressKey('2001:db8:1:2::ffff'), '2001:db8:1:2::/64')
  t.equal(addressKey('::ffff:192.0.2.7'), '192.0.2.7')
  t.equal(addressKey('fe80::1%eth0'), 'fe80:0:0:0::/64')
  t.equal(addressKey(undefined), 'unknown')
  t.equal(addressKey('x'.repeat(10_000)).length, 101, 'a label is bounded')
  const throttle = createLoginThrottle({ clock: fakeClock() })
  for (let i = 0; i < 5; i++) guess(throttle, 'dhadmin', `2001:db8:1:2::${i + 1}`)
  t.ok(throttle.attempt('dhadmin', '2001:db8:1:2::99') > 0, 'another address of the same /64 is held')
  t.equal(throttle.attempt('dhadmin', '2001:db8:1:3::1'), 0, 'another /64 is not')
  for (let i = 0; i < 5; i++) guess(throttle, 'dhadmin', undefined)
  t.ok(throttle.attempt('dhadmin', undefined) > 0, 'attempts without an address are throttled together')
})

t.test('memory stays bounded: the least recently failed keys go first', async (t) => {
  const clock = fakeClock()
  const throttle = createLoginThrottle({ clock, maxKeys: 4, freePerLoginAndAddress: 1 })
  guess(throttle, 'dhadmin', '203.0.113.1')
  t.ok(throttle.attempt('dhadmin', '203.0.113.1') > 0, 'held')
  guess(throttle, 'dhadmin', '203.0.113.2')
  guess(throttle, 'dhadmin', '203.0.113.3')
  t.equal(throttle.attempt('dhadmin', '203.0.113.1'), 0, 'the oldest keys were dropped at the bound')
})

t.test('many addresses failing one login raise one alert per window, and never hold the login back', async (t) => {
  const clock = fakeClock()
  const throttle = createLoginThrottle({ clock })
  const alerts = []
  for (let i = 0; i < 25; i++) {
    const address = `198.51.100.${i}`
    t.equal(throttle.attempt('dhadmin', address), 0, `address ${i} goes ahead`)
    const alert = throttle.failed('dhadmin', address)
    if (alert !== undefined) alerts.push({ at: i, alert })
  }
  t.same(alerts, [{ at: 9, alert: { login: 'dhadmin', addresses: 10, failures: 10, windowMs: 15 * 60_000 } }], 'one alert at the tenth address')
  t.equal(throttle.guessing.loginsUnderGuessing, 1)
  t.equal(throttle.guessing.alerts, 1)
  t.equal(throttle.attempt('dhadmin', '192.0.2.1'), 0, 'the owner still goes ahead')
  clock.advance(15 * 60_000 + 1)
  t.equal(throttle.guessing.loginsUnderGuessing, 0, 'the gauge falls once the window is over')
  for (let i = 0; i < 10; i++) throttle.attempt('dhadmin', `198.51.100.${i}`)
  const again = Array.from({ length: 10 }, (_, i) => throttle.failed('dhadmin', `198.51.100.${i}`))
  t.equal(again.filter((a) => a !== undefined).length, 1, 'a new window, a new alert')
  t.equal(throttle.guessing.alerts, 2)
})

t.test('one address failing many times is no distributed guessing; logins are watched case-blind and bounded', async (t) => {
  const clock = fakeClock()
  const watch = createGuessingWatch({ clock, addresses: 3, maxLogins: 2 })
  for (let i = 0; i < 50; i++) t.equal(watch.failed('ops', '203.0.113.9'), undefined)
  t.equal(watch.failed('Ops', '203.0.113.10'), undefined)
  t.not(watch.failed('OPS', '203.0.113.11'), undefined, 'the third address raises it')
  watch.failed('a', '203.0.113.1')
  watch.failed('b', '203.0.113.1')
  watch.failed('ops', '203.0.113.12')
  t.equal(watch.alerts, 1)
  watch.failed('ops', '203.0.113.13')
  t.not(watch.failed('ops', '203.0.113.14'), undefined, 'the evicted login starts over (memory bound) and can alert again')
})
