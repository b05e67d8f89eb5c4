/**
 * The eligibility token a confirmed verification carries, as a shop's
 * backend checks it: a compact JWS (EdDSA or ES256, `kid` in the header)
 * whose claims say who issued it, for which offer and target group, the
 * institution, the method, when, until when, and a pseudonymous `sub`
 * (stable per offer, no address). `verifyEligibilityToken` checks the
 * signature against a JWKS — given, or fetched from the daemon's
 * `/.well-known/jwks.json` and cached — the expiry, and that the token is
 * for the offer the shop expects, then answers the claims. It needs nothing
 * of the engine, so a backend imports `campusgate/token` alone.
 */
import { createLocalJWKSet, createRemoteJWKSet, errors, type JSONWebKeySet, jwtVerify } from "jose"

/** The `typ` of the token's header. */
export const ELIGIBILITY_TOKEN_TYPE = "campusgate-eligibility+jwt"

export interface EligibilityClaims {
  /** Who issued the token: the deployment's `verification.issuer` (default: its public URL). */
  readonly iss: string
  /** A pseudonymous, per-offer id of the person (a keyed hash of the canonical address). */
  readonly sub: string
  /** The verification's id. */
  readonly jti: string
  readonly iat: number
  readonly exp: number
  readonly offer?: { readonly id: string; readonly name: string }
  readonly targetGroup: { readonly id: string; readonly name: string }
  readonly institution: {
    readonly name: string | null
    readonly country: string | null
    readonly type: string
  } | null
  readonly method: "code" | "link"
}

export type EligibilityTokenProblem = "invalid" | "expired" | "wrong-offer" | "wrong-target-group" | "wrong-issuer"

/** Why a token was refused. */
export class EligibilityTokenError extends Error {
  override readonly name = "EligibilityTokenError"
  readonly reason: EligibilityTokenProblem
  constructor(reason: EligibilityTokenProblem, message: string) {
    super(message)
    this.reason = reason
  }
}

export interface VerifyEligibilityOptions {
  /** The issuer's public keys (`GET /.well-known/jwks.json`, kept by the shop); or `jwksUrl`. */
  readonly jwks?: JSONWebKeySet | undefined
  /** Where to fetch them (cached and refetched for an unknown `kid`, as after a key rotation). */
  readonly jwksUrl?: string | URL | undefined
  /** The offer the token must be for. */
  readonly offerId?: string | undefined
  /** The target group the token must be for (tokens of target-group verifications have no offer). */
  readonly targetGroupId?: string | undefined
  /** The issuer the token must come from. */
  readonly issuer?: string | undefined
  /** The instant to check expiry at (default now). */
  readonly now?: Date | number | undefined
}

const remoteSets = new Map<string, ReturnType<typeof createRemoteJWKSet>>()

const keySet = (options: VerifyEligibilityOptions) => {
  if (options.jwks !== undefined) return createLocalJWKSet(options.jwks)
  if (options.jwksUrl === undefined) throw new TypeError("give jwks or jwksUrl")
  const url = String(options.jwksUrl)
  let set = remoteSets.get(url)
  if (set === undefined) {
    set = createRemoteJWKSet(new URL(url))
    remoteSets.set(url, set)
  }
  return set
}

/**
 * The claims of a valid token for the expected offer (or target group);
 * rejects with `EligibilityTokenError` otherwise.
 */
export const verifyEligibilityToken = async (
  token: string,
  options: VerifyEligibilityOptions
): Promise<EligibilityClaims> => {
  let payload: unknown
  try {
    const verified = await jwtVerify(token, keySet(options), {
      algorithms: ["EdDSA", "ES256"],
      typ: ELIGIBILITY_TOKEN_TYPE,
      requiredClaims: ["sub", "iat", "exp", "jti"],
      ...(options.issuer === undefined ? {} : { issuer: options.issuer }),
      ...(options.now === undefined ? {} : { currentDate: new Date(options.now) })
    })
    payload = verified.payload
  } catch (error) {
    if (error instanceof errors.JWTExpired) throw new EligibilityTokenError("expired", "the token has expired")
    if (error instanceof errors.JWTClaimValidationFailed && error.claim === "iss") {
      throw new EligibilityTokenError("wrong-issuer", "the token comes from another issuer")
    }
    throw new EligibilityTokenError("invalid", `the token is not valid: ${(error as Error).message}`)
  }
  const claims = payload as EligibilityClaims
  if (options.offerId !== undefined && claims.offer?.id !== options.offerId) {
    throw new EligibilityTokenError("wrong-offer", `the token is not for the offer "${options.offerId}"`)
  }
  if (options.targetGroupId !== undefined && claims.targetGroup?.id !== options.targetGroupId) {
    throw new EligibilityTokenError(
      "wrong-target-group",
      `the token is not for the target group "${options.targetGroupId}"`
    )
  }
  return claims
}
