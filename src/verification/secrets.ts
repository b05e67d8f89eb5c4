/**
 * The deployment's verification secret and the keys derived from it
 * (HKDF-SHA-256, one key per use), so that nothing a verification stores
 * gives away an address or a code:
 * - `addressHash`: HMAC of the canonical address (`+tags`, case and
 *   provider dots folded by `engine/email/canonical.ts`), the key of
 *   lookups, redemption limits and per-address message limits;
 * - `secretHash` / `secretMatches`: HMAC of a code or link secret bound to
 *   its verification, compared in constant time;
 * - `seal` / `unseal`: the address encrypted (AES-256-GCM) while a message
 *   may still have to be sent, so a pending send survives a restart;
 * - `subject`: the token's pseudonymous `sub`, an HMAC of the address hash
 *   (itself keyed) and the offer (or target group), stable per offer and
 *   not reversible without the secret.
 * The secret is `CAMPUSGATE_VERIFICATION_SECRET`, else generated once into
 * `<dataDir>/verification-secret` (mode 0600, `store/secretFile.ts`).
 *
 * Why an HMAC and not the 64-bit `canonicalHash.ts` of the usage
 * statistics: that hash is not a cryptographic PRF and its values are never
 * stored; these are stored and must not be guessable offline.
 */
import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  createSecretKey,
  hkdfSync,
  type KeyObject,
  randomBytes,
  timingSafeEqual
} from "node:crypto"
import { join } from "node:path"
import { secretFile } from "../store/secretFile.ts"

export const VERIFICATION_SECRET_FILE = "verification-secret"

/** The verification secret for `dataDir`: `configured` if given, else the stored one, created on first use. */
export const verificationSecretFor = (dataDir: string, configured: string | undefined): string =>
  configured !== undefined && configured !== "" ? configured : secretFile(join(dataDir, VERIFICATION_SECRET_FILE))

export interface VerificationKeys {
  addressHash(canonicalAddress: string): string
  secretHash(verificationId: string, secret: string): string
  secretMatches(verificationId: string, secret: string, storedHash: string): boolean
  seal(address: string): string
  /** The address back, or undefined when `sealed` was not sealed with this secret. */
  unseal(sealed: string): string | undefined
  subject(scope: string, addressHash: string): string
}

/** A key derived once as a `KeyObject`: handing raw bytes to every HMAC or cipher made a key object each time (6% of a start's CPU). */
const derive = (secret: string, label: string): KeyObject =>
  createSecretKey(Buffer.from(hkdfSync("sha256", secret, "campusgate-verification", label, 32)))

export const verificationKeys = (secret: string): VerificationKeys => {
  const addressKey = derive(secret, "address")
  const secretKey = derive(secret, "secret")
  const sealKey = derive(secret, "seal")
  const subjectKey = derive(secret, "subject")
  const secretHash = (verificationId: string, value: string) =>
    createHmac("sha256", secretKey).update(`${verificationId}\0${value}`).digest("hex")
  return {
    addressHash: (canonical) => createHmac("sha256", addressKey).update(canonical).digest("hex"),
    secretHash,
    secretMatches: (verificationId, value, storedHash) => {
      const expected = Buffer.from(storedHash, "hex")
      const actual = Buffer.from(secretHash(verificationId, value), "hex")
      return expected.length === actual.length && timingSafeEqual(expected, actual)
    },
    seal: (address) => {
      const iv = randomBytes(12)
      const cipher = createCipheriv("aes-256-gcm", sealKey, iv)
      const encrypted = Buffer.concat([cipher.update(address, "utf8"), cipher.final()])
      return Buffer.concat([iv, cipher.getAuthTag(), encrypted]).toString("base64url")
    },
    unseal: (sealed) => {
      try {
        const bytes = Buffer.from(sealed, "base64url")
        const decipher = createDecipheriv("aes-256-gcm", sealKey, bytes.subarray(0, 12))
        decipher.setAuthTag(bytes.subarray(12, 28))
        return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString("utf8")
      } catch {
        return undefined
      }
    },
    subject: (scope, addressHash) =>
      createHmac("sha256", subjectKey).update(`${scope}\0${addressHash}`).digest("base64url")
  }
}
