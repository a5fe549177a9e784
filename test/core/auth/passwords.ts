import t from 'tap'
import { generatePassword, generateSecret, hashPassword, legacyPasswordHash, verifyPassword } from '../../../lib/core/auth/passwords.js'
import { deriveDeviceHiveKey } from '../../../lib/core/auth/jwt-key.js'

t.test('scrypt hashes verify and differ per salt', async (t) => {
  const a = await hashPassword('correct horse')
  const b = await hashPassword('correct horse')
  t.match(a, /^scrypt\$16384\$8\$1\$/)
  t.not(a, b, 'random salt')
  t.same(await verifyPassword('correct horse', a), { ok: true, needsUpgrade: false })
  t.same(await verifyPassword('wrong horse', a), { ok: false, needsUpgrade: false })
})

t.test('legacy DeviceHive hashes verify and ask for an upgrade (D5)', async (t) => {
  const stored = legacyPasswordHash('sjQbZgcCmFxqTV4CCmGwpIHO', 'DFXFrZ8VQIkOYECScBbBwsYinj+o8IlaLsRQ81wO+l8=')
  t.same(await verifyPassword('dhadmin_#911', stored), { ok: true, needsUpgrade: true })
  t.equal((await verifyPassword('dhadmin_#912', stored)).ok, false)
  t.equal((await verifyPassword('x', 'garbage')).ok, false, 'unknown formats never verify')
})

t.test('generated secrets and passwords are long and random', async (t) => {
  t.ok(deriveDeviceHiveKey(generateSecret()).length >= 32, 'at least 256 bits of HMAC key')
  t.not(generateSecret(), generateSecret())
  t.equal(generatePassword().length, 24)
  t.not(generatePassword(), generatePassword())
})
