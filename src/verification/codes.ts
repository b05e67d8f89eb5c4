/**
 * The random parts of a verification, all from the CSPRNG: its id, its
 * one-time code (uniform over the digits: `randomInt` rejects biased
 * draws) and its link secret (256 bits). A link's token is the
 * verification id and the secret, so the link finds its record without an
 * index of secrets.
 */
import { randomBytes, randomInt } from "node:crypto"
import type { VerificationId } from "../domain/Verification.ts"

const BASE32 = "abcdefghijklmnopqrstuvwxyz234567"

/** `ver_` and 26 base-32 characters (130 random bits). */
export const newVerificationId = (): VerificationId => {
  const bytes = randomBytes(17)
  let bits = 0
  let value = 0
  let id = "ver_"
  for (const byte of bytes) {
    value = (value << 8) | byte
    bits += 8
    while (bits >= 5 && id.length < 30) {
      id += BASE32[(value >>> (bits - 5)) & 31]
      bits -= 5
    }
    value &= (1 << bits) - 1
  }
  return id as VerificationId
}

/** A code of `length` decimal digits (leading zeros kept). */
export const newCode = (length: number): string => {
  let code = ""
  // randomInt takes ranges below 2^48: draw at most 9 digits at a time.
  for (let left = length; left > 0; left -= 9) {
    const digits = Math.min(9, left)
    code += String(randomInt(0, 10 ** digits)).padStart(digits, "0")
  }
  return code
}

/** A link secret: 32 random bytes, base64url. */
export const newLinkSecret = (): string => randomBytes(32).toString("base64url")

/** The token of a link: `<verification id>.<secret>`. */
export const linkToken = (id: string, secret: string): string => `${id}.${secret}`

/** A link token's parts, or undefined when it is not one. */
export const parseLinkToken = (token: string): { readonly id: string; readonly secret: string } | undefined => {
  const match = /^(ver_[a-z0-9]{26})\.([A-Za-z0-9_-]{43})$/.exec(token)
  return match === null ? undefined : { id: match[1]!, secret: match[2]! }
}
