/**
 * The hosted verification flow (`GET /verify/{offerId}`, `GET
 * /verify?targetGroupId=…`): a page a shop sends a person to, which asks
 * for the address, then the code (or says "check your inbox" for a link),
 * and on success sends the browser back to the caller's `redirect_uri`
 * with the signed eligibility token and the caller's `state`, or shows
 * that it is done. Plain forms posting to the flow's own address and
 * answered with a 303 back to it (post-redirect-get), so it works without
 * JavaScript. The steps are in `hostedSteps.ts`, what every request
 * shares in `hostedExchange.ts`, pages in `hostedPages.ts`, words in
 * `hostedWords.ts`, the files in `hostedFiles.ts`.
 *
 * - No API key: the flow acts as the offer's team (a target group's, or
 *   for a shared group the default team), through `Verifications`, which
 *   applies the team rule (`domain/visibility.ts`), the offer's policy and
 *   every per-address limit.
 * - `redirect_uri` must be on one of the offer's `redirectOrigins` — the
 *   rule the link's redirect obeys (`redirectRefusal`); another is refused
 *   with a 400 page before anything is shown.
 * - The state lives in a signed cookie (`flowCookie.ts`) and the
 *   verification record: any daemon sharing the store continues the flow.
 *   Every form carries the flow's CSRF token, checked in constant time.
 * - Form submissions draw on the `hostedFlow` rate limit of the client's
 *   address (`rateLimits.hostedFlow`).
 * - Answers are never cached, send no referrer, and carry a strict CSP:
 *   scripts and styles from this origin only (and one `<style>` with the
 *   answer's nonce), images from this origin, forms to this origin and the
 *   redirect's, no framing.
 */
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as Layer from "effect/Layer"
import { makeRateLimitDecider } from "../rateLimit.ts"
import { HOSTED_ASSET_PATH, HOSTED_LOGO_PATH, HOSTED_OFFER_PATH, HOSTED_PATH } from "../routes.ts"
import { asset, logo } from "./hostedFiles.ts"
import { entry, submit } from "./hostedSteps.ts"

const offerParam = Effect.map(HttpRouter.params, (params) => params.offerId)

export const HostedRoutes = Layer.mergeAll(
  HttpRouter.add("GET", HOSTED_PATH, entry(undefined)),
  HttpRouter.add("GET", HOSTED_OFFER_PATH, Effect.flatMap(offerParam, entry)),
  Layer.unwrap(
    Effect.map(makeRateLimitDecider, ({ decide }) =>
      Layer.mergeAll(
        HttpRouter.add("POST", HOSTED_PATH, submit(decide, undefined)),
        HttpRouter.add(
          "POST",
          HOSTED_OFFER_PATH,
          Effect.flatMap(offerParam, (id) => submit(decide, id))
        )
      )
    )
  ),
  HttpRouter.add("GET", HOSTED_ASSET_PATH, asset),
  HttpRouter.add("GET", HOSTED_LOGO_PATH, logo)
)
