/**
 * The eligibility token a confirmed verification carries, as a shop's
 * backend checks it: a compact JWS (EdDSA or ES256, `kid` in the header)
 * whose claims say who issued it, for whom (`aud`: the team and its offer
 * or target group), the institution, the method, when, until when, and a
 * pseudonymous `sub` (stable per offer, or per team and target group; no
 * address). `verifyEligibilityToken` checks the signature against a JWKS —
 * given, or fetched from the daemon's `/.well-known/jwks.json` and cached —
 * the expiry, and that the token is for the audience the shop expects: an
 * offer, or a team's target group (a shared target group serves several
 * teams, and one team's token must not pass another's check); an offer's
 * token never stands for a target group, nor the reverse. A check that
 * names no audience is a mistake, refused unless it says `audience: "any"`.
 * It needs nothing of the engine, so a backend imports `campusgate/token`
 * alone.
 */
import { createLocalJWKSet, createRemoteJWKSet, errors, type JSONWebKeySet, jwtVerify } from "jose"

/** The `typ` of the token's header. */
export const ELIGIBILITY_TOKEN_TYPE = "campusgate-eligibility+jwt"

/** Whom a token is for: a team's offer, or a team's target group. */
export type EligibilityAudience =
  | { readonly team: string; readonly offerId: string }
  | { readonly team: string; readonly targetGroupId: string }

/** The `aud` of a token: `<team>/offers/<offer id>` or `<team>/target-groups/<target group id>`. */
export const eligibilityAudience = (audience: EligibilityAudience): string =>
  "offerId" in audience
    ? `${audience.team}/offers/${audience.offerId}`
    : `${audience.team}/target-groups/${audience.targetGroupId}`

export interface EligibilityClaims {
  /** Who issued the token: the deployment's `verification.issuer` (default: its public URL). */
  readonly iss: string
  /** Whom it is for (`eligibilityAudience`): the team, and its offer or target group. */
  readonly aud: string
  /** A pseudonymous id of the person (a keyed hash of the canonical address), per offer or per team and target group. */
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

export type EligibilityTokenProblem =
  | "invalid"
  | "expired"
  | "wrong-offer"
  | "wrong-target-group"
  | "wrong-team"
  | "wrong-issuer"

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
  /** The offer the token must be for (its team's, as offers ids are one team's each). */
  readonly offerId?: string | undefined
  /** The target group the token must be for (tokens of target-group verifications have no offer); give `team` too. */
  readonly targetGroupId?: string | undefined
  /** The team the token must be for: required with `targetGroupId`, checked with `offerId` when given. */
  readonly team?: string | undefined
  /** `"any"`: accept a token for any offer or target group, instead of naming the one expected. */
  readonly audience?: "any" | undefined
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

/** What a check expects: an offer (of a given team, or of whichever team it is), or a team's target group. */
type Expected =
  | { readonly team?: string | undefined; readonly offerId: string }
  | { readonly team: string; readonly targetGroupId: string }

/** The audience the options expect, `"any"`, or a mistake in the options (thrown, not a refusal). */
const expectedAudience = (options: VerifyEligibilityOptions): Expected | "any" => {
  const { offerId, targetGroupId, team, audience } = options
  const named = (offerId === undefined ? 0 : 1) + (targetGroupId === undefined ? 0 : 1)
  if (audience === "any") {
    if (named > 0 || team !== undefined) throw new TypeError('audience: "any" names no offer, target group or team')
    return "any"
  }
  if (named !== 1)
    throw new TypeError('give the offerId or the targetGroupId (with team) the token must be for, or audience: "any"')
  if (offerId !== undefined) return { team, offerId }
  if (team === undefined)
    throw new TypeError("a target group can serve several teams: give the team the token must be for")
  return { team, targetGroupId: targetGroupId! }
}

/** Why a token is not for `expected`, if it is not. */
const audienceProblem = (claims: EligibilityClaims, expected: Expected): EligibilityTokenError | undefined => {
  const aud = typeof claims.aud === "string" ? claims.aud : undefined
  const slash = aud?.indexOf("/") ?? -1
  const team = aud === undefined || slash <= 0 ? undefined : aud.slice(0, slash)
  if (aud === undefined || team === undefined) {
    return new EligibilityTokenError("invalid", "the token names no audience (it predates audiences: verify again)")
  }
  if ("offerId" in expected) {
    if (aud !== eligibilityAudience({ team, offerId: expected.offerId }) || claims.offer?.id !== expected.offerId)
      return new EligibilityTokenError("wrong-offer", `the token is not for the offer "${expected.offerId}"`)
  } else if (
    aud.slice(slash) !== `/target-groups/${expected.targetGroupId}` ||
    claims.offer !== undefined ||
    claims.targetGroup?.id !== expected.targetGroupId
  ) {
    return new EligibilityTokenError(
      "wrong-target-group",
      `the token is not for the target group "${expected.targetGroupId}"`
    )
  }
  if (expected.team !== undefined && team !== expected.team)
    return new EligibilityTokenError("wrong-team", `the token is not for the team "${expected.team}"`)
  return undefined
}

/**
 * The claims of a valid token for the expected audience — an offer
 * (`offerId`, optionally `team`), a team's target group (`targetGroupId`
 * and `team`), or explicitly any (`audience: "any"`); rejects with
 * `EligibilityTokenError` otherwise. Options that name no audience throw a
 * `TypeError`.
 */
export const verifyEligibilityToken = async (
  token: string,
  options: VerifyEligibilityOptions
): Promise<EligibilityClaims> => {
  const expected = expectedAudience(options)
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
  const problem = expected === "any" ? undefined : audienceProblem(claims, expected)
  if (problem !== undefined) throw problem
  return claims
}
