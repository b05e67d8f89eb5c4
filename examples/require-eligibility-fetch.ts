/**
 * Checking the eligibility token on the shop's server, for handlers of the
 * fetch API (`Request → Response`: Hono, `Deno.serve`, `Bun.serve`,
 * Cloudflare Workers, Next.js route handlers). The shop's page sends the
 * token the drop-in (`/verify.js`) or the hosted page's redirect gave it in
 * `Authorization: Bearer <token>`; the token is checked offline against the
 * daemon's public keys (fetched once from `/.well-known/jwks.json`, then
 * kept) for the offer, team and issuer the shop expects, and the handler
 * runs with its claims. No token: 401; a token that does not pass (forged,
 * expired, for another offer or team): 403 with the reason.
 *
 *   const discount = requireEligibility(
 *     { jwksUrl: "https://campusgate.example/.well-known/jwks.json", issuer: "https://campusgate.example",
 *       offerId: "acme-student-discount", team: "acme" },
 *     (request, claims) => Response.json({ discount: "STUDENT50", institution: claims.institution?.name })
 *   )
 *   Deno.serve(discount)                  // or Bun.serve({ fetch: discount }), export default { fetch: discount }
 *   app.post("/student-discount", (c) => discount(c.req.raw))   // Hono
 *
 * `test/server/tokenMiddleware.test.ts` runs it against tokens the project signs.
 */
import {
  type EligibilityClaims,
  EligibilityTokenError,
  type VerifyEligibilityOptions,
  verifyEligibilityToken
} from "campusgate/token"

export interface RequireEligibilityOptions extends VerifyEligibilityOptions {
  /** Where the token is read from; by default `Authorization: Bearer …`. */
  readonly tokenOf?: (request: Request) => string | undefined
}

/** The token of an `Authorization: Bearer <token>` field. */
export const bearerToken = (authorization: string | null | undefined): string | undefined =>
  /^Bearer +([\w.-]+)$/i.exec(authorization ?? "")?.[1]

/** `handler`, run only for a request that carries a valid token for the expected offer (or team's target group). */
export const requireEligibility =
  (
    options: RequireEligibilityOptions,
    handler: (request: Request, claims: EligibilityClaims) => Response | Promise<Response>
  ) =>
  async (request: Request): Promise<Response> => {
    const { tokenOf = (each: Request) => bearerToken(each.headers.get("authorization")), ...expected } = options
    const token = tokenOf(request)
    if (token === undefined) {
      return Response.json(
        { error: "eligibility-required", reason: "send the eligibility token as Authorization: Bearer <token>" },
        { status: 401, headers: { "www-authenticate": 'Bearer realm="eligibility"' } }
      )
    }
    let claims: EligibilityClaims
    try {
      claims = await verifyEligibilityToken(token, expected)
    } catch (error) {
      if (!(error instanceof EligibilityTokenError)) throw error
      return Response.json({ error: "not-eligible", reason: error.reason }, { status: 403 })
    }
    return handler(request, claims)
  }
