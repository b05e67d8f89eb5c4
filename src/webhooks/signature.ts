/**
 * Signatures of webhooks (job callbacks, verification events), in the style of Stripe's: header
 * `Campusgate-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`.
 * Signing the timestamp with the body lets a receiver refuse replays older
 * than its tolerance; comparison is constant-time. Several `v1=` values may
 * appear (during a secret rotation): one match is enough.
 */
import { createHmac, timingSafeEqual } from "node:crypto"

export const SIGNATURE_HEADER = "Campusgate-Signature"

const hmac = (secret: string, timestamp: number, body: string | Uint8Array): Buffer =>
  createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest()

/** The `Campusgate-Signature` header value for `body` sent at `timestamp` (unix seconds). */
export const signCallback = (secret: string, timestamp: number, body: string | Uint8Array): string =>
  `t=${timestamp},v1=${hmac(secret, timestamp, body).toString("hex")}`

export interface VerifyOptions {
  /** How old (or how far in the future) a timestamp may be. */
  readonly toleranceSeconds: number
  /** The receiver's clock, milliseconds since the epoch. */
  readonly now: number
}

/** Whether `header` is a valid signature of `body` by `secret`, made within the tolerance. */
export const verifyCallback = (
  secret: string,
  header: string | undefined,
  body: string | Uint8Array,
  options: VerifyOptions
): boolean => {
  if (header === undefined) return false
  let timestamp: number | undefined
  const signatures: Array<Buffer> = []
  for (const part of header.split(",")) {
    const [key, value] = part.trim().split("=", 2)
    if (key === "t" && value !== undefined && /^\d{1,12}$/.test(value)) timestamp = Number(value)
    else if (key === "v1" && value !== undefined && /^[0-9a-f]{64}$/i.test(value)) {
      signatures.push(Buffer.from(value, "hex"))
    }
  }
  if (timestamp === undefined || signatures.length === 0) return false
  if (Math.abs(options.now / 1000 - timestamp) > options.toleranceSeconds) return false
  const expected = hmac(secret, timestamp, body)
  let valid = false
  // Every candidate is compared, so the time taken does not tell which one matched.
  for (const signature of signatures) valid = timingSafeEqual(signature, expected) || valid
  return valid
}
