/**
 * The keys that sign eligibility tokens and what is done with them: a new
 * key (Ed25519 or P-256, its `kid` the RFC 7638 thumbprint), rotation (the
 * signing key retires and stays published until the last token it can have
 * signed expires; keys past that are dropped), the published JWKS, and
 * signing a token. Keys are kept by `SigningKeyStore`; rotation happens on
 * `campusgate keys rotate-signing` and, when the signing key is older than
 * `verification.signing.rotateAfter`, by the daemon on its own.
 */
import { createHash, generateKeyPairSync } from "node:crypto"
import { importJWK, type JSONWebKeySet, SignJWT } from "jose"
import { ELIGIBILITY_TOKEN_TYPE, type EligibilityClaims } from "./eligibilityToken.ts"
import type { SigningAlgorithm, SigningKey } from "./SigningKeyStore.ts"

const thumbprint = (jwk: Readonly<Record<string, string>>): string => {
  const members = jwk.kty === "OKP" ? ["crv", "kty", "x"] : ["crv", "kty", "x", "y"]
  const canonical = `{${members.map((name) => `"${name}":"${jwk[name]}"`).join(",")}}`
  return createHash("sha256").update(canonical).digest("base64url")
}

/** A fresh key pair for `algorithm`, created at `now`. */
export const newSigningKey = (algorithm: SigningAlgorithm, now: number): SigningKey => {
  const { privateKey, publicKey } =
    algorithm === "EdDSA" ? generateKeyPairSync("ed25519") : generateKeyPairSync("ec", { namedCurve: "P-256" })
  const publicJwk = publicKey.export({ format: "jwk" }) as Record<string, string>
  const privateJwk = privateKey.export({ format: "jwk" }) as Record<string, string>
  return { kid: thumbprint(publicJwk), algorithm, createdAt: now, privateJwk, publicJwk }
}

/** The key that signs now: the newest one not retired. */
export const activeKey = (keys: ReadonlyArray<SigningKey>): SigningKey | undefined => {
  let active: SigningKey | undefined
  for (const key of keys)
    if (key.retiredAt === undefined && (active === undefined || key.createdAt > active.createdAt)) active = key
  return active
}

/** Whether there is no signing key, or it is older than `rotateAfterMs`. */
export const needsRotation = (keys: ReadonlyArray<SigningKey>, now: number, rotateAfterMs: number): boolean => {
  const active = activeKey(keys)
  return active === undefined || now - active.createdAt >= rotateAfterMs
}

/**
 * The keys after a rotation at `now`: a new signing key; the old one
 * retired and published for `longestTokenMs` more (no token it signed
 * lives longer); retired keys whose tokens have all expired dropped.
 */
export const rotate = (
  keys: ReadonlyArray<SigningKey>,
  algorithm: SigningAlgorithm,
  now: number,
  longestTokenMs: number
): Array<SigningKey> => [
  ...keys.flatMap((key): Array<SigningKey> => {
    if (key.retiredAt === undefined) return [{ ...key, retiredAt: now, publishUntil: now + longestTokenMs }]
    return key.publishUntil !== undefined && key.publishUntil <= now ? [] : [key]
  }),
  newSigningKey(algorithm, now)
]

/** The public keys whose tokens may still be valid at `now`. */
export const publishedKeys = (keys: ReadonlyArray<SigningKey>, now: number): JSONWebKeySet => ({
  keys: keys
    .filter((key) => key.publishUntil === undefined || key.publishUntil > now)
    .sort((a, b) => b.createdAt - a.createdAt)
    .map((key) => ({ ...key.publicJwk, kid: key.kid, alg: key.algorithm, use: "sig" }))
})

/** Imported private keys by kid: importing costs more than signing. */
const imported = new Map<string, Awaited<ReturnType<typeof importJWK>>>()

/** The claims signed with `key`, as a compact JWS. */
export const signToken = async (key: SigningKey, claims: EligibilityClaims): Promise<string> => {
  let privateKey = imported.get(key.kid)
  if (privateKey === undefined) {
    privateKey = await importJWK(key.privateJwk, key.algorithm)
    imported.set(key.kid, privateKey)
  }
  return new SignJWT({ ...claims })
    .setProtectedHeader({ alg: key.algorithm, kid: key.kid, typ: ELIGIBILITY_TOKEN_TYPE })
    .sign(privateKey)
}
