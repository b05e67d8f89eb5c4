/**
 * Checking the eligibility token on the shop's server, as Express (4 or 5)
 * middleware: `app.post("/student-discount", requireEligibility({ … }), handler)`,
 * the handler reading the claims from `req.eligibility`. The token comes in
 * `Authorization: Bearer <token>` (the drop-in's `token`, sent by the shop's
 * page) and is checked offline against the daemon's public keys (fetched
 * once from `/.well-known/jwks.json`, then kept) for the offer, team and
 * issuer the shop expects. No token: 401; a token that does not pass
 * (forged, expired, for another offer or team): 403 with the reason; a
 * failure of another kind goes to `next(error)`.
 *
 *   import express from "express"
 *   const app = express()
 *   app.post("/student-discount",
 *     requireEligibility({ jwksUrl: "https://campusgate.example/.well-known/jwks.json",
 *       issuer: "https://campusgate.example", offerId: "acme-student-discount", team: "acme" }),
 *     (req, res) => res.json({ discount: "STUDENT50", institution: (req as EligibleRequest).eligibility?.institution?.name }))
 *
 * It is written against node:http's request and response, which Express's
 * extend, so it type-checks without the express package (not a dependency of
 * this project) and mounts on a plain `node:http` server as well, as
 * `test/server/tokenMiddleware.test.ts` and the drop-in's browser test do.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import {
  type EligibilityClaims,
  EligibilityTokenError,
  type VerifyEligibilityOptions,
  verifyEligibilityToken
} from "campusgate/token"

/** A request that passed: its token's claims. */
export interface EligibleRequest extends IncomingMessage {
  eligibility?: EligibilityClaims
}

/** The token of an `Authorization: Bearer <token>` field. */
const bearerToken = (authorization: string | undefined): string | undefined =>
  /^Bearer +([\w.-]+)$/i.exec(authorization ?? "")?.[1]

const refuse = (response: ServerResponse, status: number, body: object, headers: Record<string, string> = {}) => {
  response.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body))
}

/** Middleware that lets through only a request with a valid token for the expected offer (or team's target group). */
export const requireEligibility =
  (options: VerifyEligibilityOptions) =>
  (request: EligibleRequest, response: ServerResponse, next: (error?: unknown) => void): void => {
    const token = bearerToken(request.headers.authorization)
    if (token === undefined) {
      refuse(
        response,
        401,
        { error: "eligibility-required", reason: "send the eligibility token as Authorization: Bearer <token>" },
        { "www-authenticate": 'Bearer realm="eligibility"' }
      )
      return
    }
    verifyEligibilityToken(token, options).then(
      (claims) => {
        request.eligibility = claims
        next()
      },
      (error: unknown) => {
        if (error instanceof EligibilityTokenError)
          refuse(response, 403, { error: "not-eligible", reason: error.reason })
        else next(error)
      }
    )
  }
