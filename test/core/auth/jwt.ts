import t from 'tap'
import { createHmac } from 'node:crypto'
import { deriveDeviceHiveKey, deriveJwtKey, isCanonicalBase64, jwtKeyWarning } from '../../../lib/core/auth/jwt-key.js'
import { createJwtCodec, parsePayload, TokenRejectedError } from '../../../lib/core/auth/jwt.js'

// DeviceHive's integration-test tokens, signed with the secret `devicehive` (auth spec §1.4).
const ADMIN = 'eyJhbGciOiJIUzI1NiJ9.eyJwYXlsb2FkIjp7InUiOjEsImEiOlswXSwibiI6WyIqIl0sImR0IjpbIioiXSwiZSI6MTU1OTM0NzIwMDAwMCwidCI6MX19.0i1MaUBtgfDPG4_cvSjEVO11FZy7o_L_6uRCR5NR3v4'
const ADMIN_REFRESH = 'eyJhbGciOiJIUzI1NiJ9.eyJwYXlsb2FkIjp7InUiOjEsImEiOlswXSwibiI6WyIqIl0sImR0IjpbIioiXSwiZSI6MTU1OTM0NzIwMDAwMCwidCI6MH19.FhgGiIFMl7PSiaHMXGFlJTMKUyjA_JXjU_Qk2pjGna4'
const ADMIN_REFRESH_INVALID_SIGNATURE = 'eyJhbGciOiJIUzI1NiJ9.eyJwYXlsb2FkIjp7InUiOjEsImEiOlswXSwibiI6WyIqIl0sImQiOlsiKiJdLCJlIjoxNTU5MzQ3MjAwMDAwLCJ0IjowfX0.lo2T-wbXe1J9DvVyxJtFkNlo76uH_kSVwVY-FxLZRkk'

const b64url = (value: object | string): string => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url')

t.test('key derivation drops the trailing partial Base64 group, as jjwt does', async (t) => {
  t.same([...deriveDeviceHiveKey('devicehive')], [0x75, 0xeb, 0xe2, 0x71, 0xe8, 0x62])
  t.not(deriveDeviceHiveKey('devicehive').length, Buffer.from('devicehive', 'base64').length, 'differs from Buffer base64 decoding')
  t.same([...deriveDeviceHiveKey('de-vi!ce')], [...deriveDeviceHiveKey('device').subarray(0, 3)], 'characters outside the alphabet are dropped')
  t.same([...deriveDeviceHiveKey('QQ==')], [0x41], 'padding shortens a group')
  t.same([...deriveDeviceHiveKey('abc')], [], 'an incomplete group alone yields nothing')
  t.throws(() => createJwtCodec('abc', 'devicehive'), /empty HMAC key/)
})

t.test('any change of the secret changes the key; canonical Base64 keeps DeviceHive\'s key (#22)', async (t) => {
  for (const secret of ['QQ==', 'c2VjcmV0LWtleS1tYXRlcmlhbA==', 'ab+/', '0123456789abcdef0123456789abcdef']) {
    t.ok(isCanonicalBase64(secret), `${secret} is canonical`)
    t.same(deriveJwtKey(secret), deriveDeviceHiveKey(secret), `${secret}: DeviceHive's key`)
  }
  for (const secret of ['devicehive', 'QR==', 'abc', 'my-secret', 'a b c d ', 'QQ', 'QQ=', '=QQ=', '', 'ümlaut!']) {
    t.notOk(isCanonicalBase64(secret), `${JSON.stringify(secret)} is not canonical`)
  }
  // Pairs DeviceHive's derivation confuses: the trailing partial group, dropped characters, ignored low bits.
  for (const [a, b] of [['devicehive', 'devicehivX'], ['my-secret-1234', 'my!secret!1234'], ['QQ==', 'QR=='], ['abcd', 'abcde'], ['abcdefgh', 'abcd-efgh']]) {
    t.same(deriveDeviceHiveKey(a!), deriveDeviceHiveKey(b!), `DeviceHive: ${a} and ${b} give the same key`)
    t.notSame(deriveJwtKey(a!), deriveJwtKey(b!), `devicehub: ${a} and ${b} give different keys`)
  }
  t.same(deriveJwtKey('my-secret'), Buffer.from('my-secret'), 'a secret that is not canonical Base64 is used whole, as UTF-8')
  t.same(deriveJwtKey('devicehive', 'devicehive'), deriveDeviceHiveKey('devicehive'), 'the devicehive derivation on request')
  const auto = createJwtCodec('devicehive').sign({ u: 1, a: [0], n: ['*'], dt: ['*'], e: 1559347200000, t: 1 })
  t.not(auto, ADMIN, 'by default devicehive does not sign DeviceHive\'s tokens')
  t.throws(() => createJwtCodec('devicehive').decode(ADMIN), TokenRejectedError, 'nor verify them')
  t.throws(() => createJwtCodec('devicehivX', 'devicehive').decode(createJwtCodec('devicehive').sign({ u: 1, a: [0], n: ['*'], dt: ['*'], e: 1, t: 1 })), TokenRejectedError)
})

t.test('a secret too short to be safe gets a warning', async (t) => {
  t.match(jwtKeyWarning('devicehive'), /only 10 bytes of HMAC key \(at least 32 are safe\).*openssl rand -base64 48/)
  t.match(jwtKeyWarning('devicehive', 'devicehive'), /only 6 bytes.*ignores part of this secret/)
  t.match(jwtKeyWarning('abcd'.repeat(10)), /only 30 bytes/, 'a canonical Base64 secret counts its decoded bytes')
  t.equal(jwtKeyWarning('abcd'.repeat(11)), undefined, '33 bytes: fine')
  t.equal(jwtKeyWarning('x-'.repeat(16)), undefined, '32 characters used whole: fine')
  t.match(jwtKeyWarning(`${'abcd'.repeat(11)}-`, 'devicehive'), /ignores part/, 'long but partly ignored')
  const { generateSecret } = await import('../../../lib/core/auth/passwords.js')
  t.equal(jwtKeyWarning(generateSecret()), undefined, 'a generated secret is long enough')
})

t.test('signing reproduces DeviceHive tokens byte for byte', async (t) => {
  const jwt = createJwtCodec('devicehive', 'devicehive')
  t.equal(jwt.sign({ u: 1, a: [0], n: ['*'], dt: ['*'], e: 1559347200000, t: 1 }), ADMIN)
  t.equal(jwt.sign({ u: 1, a: [0], n: ['*'], dt: ['*'], e: 1559347200000, t: 0 }), ADMIN_REFRESH)
  t.equal(JSON.parse(Buffer.from(ADMIN.split('.')[0]!, 'base64url').toString()).typ, undefined, 'header has no typ')
})

t.test('decode verifies signature and shape', async (t) => {
  const jwt = createJwtCodec('devicehive', 'devicehive')
  t.same(jwt.decode(ADMIN), { u: 1, a: [0], n: ['*'], dt: ['*'], e: 1559347200000, t: 1 })
  t.same(jwt.decode(ADMIN_REFRESH).t, 0)
  t.throws(() => jwt.decode(ADMIN_REFRESH_INVALID_SIGNATURE), TokenRejectedError)
  t.throws(() => createJwtCodec('another-secret-value').decode(ADMIN), TokenRejectedError, 'other key')
  t.throws(() => jwt.decode('not.a.jwt'), TokenRejectedError)
  t.throws(() => jwt.decode(''), TokenRejectedError)

  const key = deriveDeviceHiveKey('devicehive')
  const forge = (header: object, claims: object, alg = 'sha256'): string => {
    const input = `${b64url(header)}.${b64url(claims)}`
    return `${input}.${createHmac(alg, key).update(input).digest('base64url')}`
  }
  const claims = { payload: { u: 1, a: [0], n: ['*'], dt: ['*'], e: 1559347200000, t: 1 } }
  t.ok(jwt.decode(forge({ alg: 'HS256' }, claims)), 'a correctly forged HS256 token verifies')
  t.throws(() => jwt.decode(`${b64url({ alg: 'none' })}.${b64url(claims)}.`), TokenRejectedError, 'alg none (D6)')
  t.throws(() => jwt.decode(forge({ alg: 'HS512' }, claims, 'sha512')), TokenRejectedError, 'HS512 (D6)')
  t.throws(() => jwt.decode(forge({ alg: 'HS384' }, claims, 'sha384')), TokenRejectedError, 'HS384 (D6)')
  t.throws(() => jwt.decode(forge({ alg: 'HS256' }, { ...claims, exp: 1 })), TokenRejectedError, 'a registered exp is honoured')
})

t.test('payload shape rules (§1.2)', async (t) => {
  t.same(parsePayload({ u: '7', a: [2], n: [1, '2'], dt: null, e: 5, t: 1, d: ['*'] }), { u: 7, a: [2], n: ['1', '2'], dt: null, e: 5, t: 1 }, 'numeric strings and numbers accepted, stray keys ignored')
  t.same(parsePayload({ tpc: 'plugin_topic_x', a: [16], e: 5, t: 0 }), { tpc: 'plugin_topic_x', a: [16], e: 5, t: 0 })
  t.same(parsePayload({ u: 1, e: 5, t: 1 }), { u: 1, a: null, n: null, dt: null, e: 5, t: 1 }, 'absent a/n/dt read as null')
  for (const bad of [
    null, [], 'x', { a: [0], e: 5, t: 1 }, { u: 1, a: [0], t: 1 }, { u: 1, a: [0], e: 5 },
    { u: 1, a: [0], e: 5, t: 2 }, { u: 1, a: [99], e: 5, t: 1 }, { u: 1, a: ['0'], e: 5, t: 1 },
    { u: 1, a: [0], n: ['x'], e: 5, t: 1 }, { u: 1, a: [0], e: '5', t: 1 }, { u: -1, e: 5, t: 1 }
  ]) {
    t.equal(parsePayload(bad), undefined, JSON.stringify(bad))
  }
})

t.test('a verified token is remembered: the same frozen payload, and a tampered copy still fails', async (t) => {
  const jwt = createJwtCodec('devicehive', 'devicehive')
  const first = jwt.decode(ADMIN)
  t.equal(jwt.decode(ADMIN), first, 'the second decode returns the remembered payload')
  t.ok(Object.isFrozen(first) && Object.isFrozen(first.a), 'shared payloads cannot be changed by a caller')
  t.same(first, { u: 1, a: [0], n: ['*'], dt: ['*'], e: 1559347200000, t: 1 })
  const [header, body, signature] = ADMIN.split('.') as [string, string, string]
  const tampered = `${header}.${b64url({ payload: { u: 2, a: [0], n: ['*'], dt: ['*'], e: 1559347200000, t: 1 } })}.${signature}`
  t.throws(() => jwt.decode(tampered), TokenRejectedError)
  t.throws(() => jwt.decode(`${header}.${body}.${signature.slice(0, -2)}xx`), TokenRejectedError)
  t.throws(() => createJwtCodec('other-secret').decode(ADMIN), TokenRejectedError, 'the memory is per key')
  for (let i = 0; i < 1001; i++) jwt.decode(jwt.sign({ u: i, a: null, n: null, dt: null, e: i, t: 1 }))
  t.not(jwt.decode(ADMIN), first, 'the memory is bounded (cleared when full)')
  t.same(jwt.decode(ADMIN), first)
})

t.test('the token version claim v (issue #16): kept when positive, left out at 0, anything else refused', async (t) => {
  t.same(parsePayload({ u: 1, a: [0], n: null, dt: null, e: 1, t: 1, v: 3 }), { u: 1, a: [0], n: null, dt: null, e: 1, t: 1, v: 3 })
  t.same(parsePayload({ u: 1, a: [0], n: null, dt: null, e: 1, t: 1, v: 0 }), { u: 1, a: [0], n: null, dt: null, e: 1, t: 1 })
  for (const v of [-1, 1.5, '2', {}]) t.equal(parsePayload({ u: 1, a: [0], n: null, dt: null, e: 1, t: 1, v }), undefined, JSON.stringify(v))
})
