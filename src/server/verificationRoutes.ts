/**
 * The two verification routes served beside the API, without an API key:
 * - `GET /v/{token}`: the link a message carries. Opening it confirms the
 *   verification (the token's secret is the credential) and redirects to
 *   the verification's `redirectUrl` — an origin its offer allows — with
 *   `status`, `verificationId` and, when verified, the eligibility `token`
 *   in the query; without one it answers a small page in the message's
 *   language (200 verified, 409 failed, 410 expired or not valid). The
 *   answers are not cached and send no referrer, so the token in the path
 *   goes nowhere else; the log shows the route template, not the path.
 * - `GET /.well-known/jwks.json`: the public keys of eligibility tokens.
 */
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import { escapeHtml } from "../domain/MessageTemplate.ts"
import { pageWords } from "../verification/messages.ts"
import { type LinkOutcome, Verifications } from "../verification/Verifications.ts"
import { JWKS_PATH, LINK_PATH } from "./routes.ts"

// Not 404 for a link that is not valid: the problem middleware answers a 404 without a problem body as "no such route".
const STATUS: Record<LinkOutcome["outcome"], number> = { verified: 200, expired: 410, failed: 409, invalid: 410 }

const page = (locale: string, text: string): string =>
  `<!doctype html>\n<html lang="${escapeHtml(locale)}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(text)}</title></head>\n<body style="font-family: sans-serif; max-width: 32em; margin: 4em auto; line-height: 1.5"><p>${escapeHtml(text)}</p></body></html>\n`

const PRIVATE = { "cache-control": "no-store", "referrer-policy": "no-referrer" }

/**
 * Where the browser goes after a link: the verification's redirect URL with
 * the outcome in its query (the hosted page returns the same way).
 */
export const redirectTarget = (outcome: LinkOutcome): string | undefined => {
  if (outcome.redirectUrl === undefined || outcome.verification === undefined) return undefined
  const url = new URL(outcome.redirectUrl)
  url.searchParams.set("status", outcome.verification.status)
  url.searchParams.set("verificationId", outcome.verification.id)
  if (outcome.outcome === "verified" && outcome.verification.eligibility !== undefined) {
    url.searchParams.set("token", outcome.verification.eligibility.token)
  }
  return url.toString()
}

export const answerLink = (outcome: LinkOutcome): HttpServerResponse.HttpServerResponse => {
  const target = outcome.outcome === "invalid" ? undefined : redirectTarget(outcome)
  if (target !== undefined) return HttpServerResponse.empty({ status: 303, headers: { ...PRIVATE, location: target } })
  return HttpServerResponse.text(page(outcome.locale, pageWords(outcome.locale)[outcome.outcome]), {
    status: STATUS[outcome.outcome],
    contentType: "text/html; charset=utf-8",
    headers: PRIVATE
  })
}

export const VerificationRoutes = Layer.mergeAll(
  HttpRouter.add(
    "GET",
    LINK_PATH,
    Effect.gen(function* () {
      const { token } = yield* HttpRouter.params
      return answerLink(yield* (yield* Verifications).confirmLink(token ?? ""))
    })
  ),
  HttpRouter.add(
    "GET",
    JWKS_PATH,
    Effect.gen(function* () {
      const jwks = yield* (yield* Verifications).jwks()
      return HttpServerResponse.jsonUnsafe(jwks, { headers: { "cache-control": "public, max-age=300" } })
    })
  )
)
