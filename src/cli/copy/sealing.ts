/**
 * How a backup keeps its secrets and signing keys: sealed with a key drawn
 * from the operator's passphrase (scrypt, N = 2^15, r = 8, p = 1: about
 * 0.1 s and 32 MiB, once per archive) and AES-256-GCM, a fresh 12-byte IV per
 * sealed line. The archive's header holds the salt, the parameters and a
 * known text sealed, so a wrong passphrase is told before anything is read
 * or restored, and the GCM tag refuses any sealed line changed since —
 * never garbage keys.
 */
import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from "node:crypto"
import * as Schema from "effect/Schema"

export const Sealing = Schema.Struct({
  kdf: Schema.Literal("scrypt"),
  salt: Schema.String,
  N: Schema.Number,
  r: Schema.Number,
  p: Schema.Number,
  cipher: Schema.Literal("aes-256-gcm"),
  /** `CHECK` sealed: opens only with the right passphrase. */
  check: Schema.String
})
export type Sealing = typeof Sealing.Type

const CHECK = "campusgate-backup"
const IV_BYTES = 12
const TAG_BYTES = 16

/** The shortest passphrase taken: the archive leaves the deployment, the secrets in it must not be guessed. */
export const MIN_PASSPHRASE = 12

export class WrongPassphrase extends Error {
  constructor() {
    super("the passphrase does not open this backup (a wrong passphrase, or a damaged header)")
  }
}

const keyOf = (passphrase: string, salt: Buffer, N: number, r: number, p: number): Buffer =>
  scryptSync(passphrase.normalize("NFC"), salt, 32, { N, r, p, maxmem: 256 * N * r })

const sealWith =
  (key: Buffer) =>
  (text: string): string => {
    const iv = randomBytes(IV_BYTES)
    const cipher = createCipheriv("aes-256-gcm", key, iv)
    const sealed = Buffer.concat([cipher.update(text, "utf8"), cipher.final()])
    return Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString("base64")
  }

const openWith =
  (key: Buffer) =>
  (sealed: string): string => {
    const bytes = Buffer.from(sealed, "base64")
    if (bytes.length < IV_BYTES + TAG_BYTES) throw new WrongPassphrase()
    const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, IV_BYTES))
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES))
    try {
      return Buffer.concat([
        decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)),
        decipher.final()
      ]).toString("utf8")
    } catch {
      throw new WrongPassphrase()
    }
  }

/** A new sealing for an archive: its header part and the function that seals a line. */
export const newSealing = (
  passphrase: string
): { readonly sealing: Sealing; readonly seal: (text: string) => string } => {
  const salt = randomBytes(16)
  const [N, r, p] = [1 << 15, 8, 1]
  const seal = sealWith(keyOf(passphrase, salt, N, r, p))
  return {
    sealing: { kdf: "scrypt", salt: salt.toString("base64"), N, r, p, cipher: "aes-256-gcm", check: seal(CHECK) },
    seal
  }
}

/** The function that opens an archive's sealed lines; throws `WrongPassphrase` when the passphrase is not the one it was made with. */
export const openSealing = (sealing: Sealing, passphrase: string): ((sealed: string) => string) => {
  if (sealing.N > 1 << 20 || sealing.r > 32 || sealing.p > 16)
    throw new Error("the backup's key parameters are out of range")
  const open = openWith(keyOf(passphrase, Buffer.from(sealing.salt, "base64"), sealing.N, sealing.r, sealing.p))
  if (open(sealing.check) !== CHECK) throw new WrongPassphrase()
  return open
}
