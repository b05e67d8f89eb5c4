/**
 * Handlers of the offer endpoints. Reads answer from the snapshot in force,
 * with the offer's version as `ETag`; changes go through `Resources`
 * (stored, and serving before the answer), with `If-Match` as the version
 * they are based on. A caller sees only its team's offers: another team's
 * offer is 404, in a batch a per-item NOT_FOUND. Offers defined in the
 * config directory are read-only here (409): they change in git.
 */
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as Result from "effect/Result"
import { CampusgateApi } from "../../api/Api.ts"
import type { BulkProcessRequest, OfferResource } from "../../api/offers.ts"
import { type BadRequest, storeUnavailable } from "../../api/problems.ts"
import { Resources, sourceOf, versionOf } from "../../app/Resources.ts"
import { type ConfigSnapshot, Snapshot } from "../../app/Snapshot.ts"
import { Validation, ValidationError } from "../../app/Validation.ts"
import { visibleOffer, visibleOffers } from "../../app/visibility.ts"
import { effectiveStatus, type Offer } from "../../domain/Offer.ts"
import { OfferStatus } from "../../stats/OfferStatus.ts"
import { JsonBytes } from "../jsonBytes.ts"
import { answerWith } from "../problemResponse.ts"
import { offerResultText } from "../resultJson.ts"
import {
  answerBulk,
  answerCreate,
  answerDelete,
  answerGet,
  answerList,
  answerUpdate,
  callersResource,
  entityTag,
  invalid
} from "./shared.ts"

const toResource = (snapshot: ConfigSnapshot, offer: Offer): OfferResource => ({
  ...offer,
  effectiveStatus: effectiveStatus(offer, snapshot.engine.now()),
  source: sourceOf(snapshot, "offer", offer.id)
})

/** The offer as answered, and its tag: its version and its effective status (which its window moves). */
const answered = (snapshot: ConfigSnapshot, offer: Offer) => {
  const body = toResource(snapshot, offer)
  return { body, headers: { etag: entityTag(versionOf("offer", offer), body.effectiveStatus) } }
}

/** The offer `id` as `team` sees it. */
const findOffer = (engine: ConfigSnapshot["engine"], team: string, id: string) => visibleOffer(engine, team, id)?.offer

/** About how many bytes an offer result of a batch takes (an estimate; the answer grows past it). */
const BATCH_RESULT_BYTES = 3072

/**
 * (offer, email) pairs, each answered on its own: the batch answer's JSON
 * bytes (an offer result per request in input order, or a per-item
 * NOT_FOUND for an offer the team cannot see; `summary`, `requestId`), or
 * the problem of a batch over `bound`. The one implementation behind
 * `POST /offers/bulk-process`, whether the fast path (`fastPath.ts`) or the
 * full pipeline serves it; the text is what the contract's
 * `BulkProcessResponse` encodes (test/server/handlers/bulkAnswers.test.ts).
 */
export const processBatch = (
  validation: Validation["Service"],
  team: string,
  payload: BulkProcessRequest,
  bound: number,
  requestId: string
): Buffer | BadRequest => {
  const { requests } = payload
  const total = requests.length
  if (total > bound) {
    return invalid("The batch is too large.", [
      {
        field: "/requests",
        code: "TOO_MANY",
        message: `at most ${bound} requests per batch (got ${total}); use POST /api/v1/validate/bulk-async for larger batches`
      }
    ])
  }
  let eligible = 0
  let errors = 0
  const out = new JsonBytes(256 + total * BATCH_RESULT_BYTES)
  out.write(`{"results":[`)
  const results = validation.batch(team, requests)
  for (let i = 0; i < total; i++) {
    const result = results[i]!
    let text: string
    if (result instanceof ValidationError) {
      errors++
      const { offerId, email } = requests[i]!
      const error = { code: "NOT_FOUND", message: `There is no offer "${offerId}".` }
      text = JSON.stringify({ offerId, email, error })
    } else {
      if (result.isValid) eligible++
      text = offerResultText(result)
    }
    out.write(i === 0 ? text : `,${text}`)
  }
  const summary = { total, eligible, ineligible: total - eligible - errors, errors }
  out.write(`],"summary":${JSON.stringify(summary)},"requestId":${JSON.stringify(requestId)}}`)
  return out.bytes()
}

export const OffersHandlers = HttpApiBuilder.group(
  CampusgateApi,
  "offers",
  Effect.fn(function* (handlers) {
    const server = yield* Snapshot
    const validation = yield* Validation
    const resources = yield* Resources
    const offerStatus = yield* OfferStatus
    /** The caller's team's offer `id` with the snapshot it was read from; another team's is 404. */
    const callersOffer = (id: string) => callersResource(server, "offer", id, findOffer)
    return handlers
      .handle("create", ({ payload }) => {
        const { effectiveStatus: _effective, source: _source, ...fields } = payload
        return answerCreate("offers", (team) => resources.createOffer(team, fields), answered)
      })
      .handle("list", ({ query }) =>
        answerList(
          server,
          query,
          visibleOffers,
          toResource,
          (offer) => query.status === undefined || offer.effectiveStatus === query.status
        )
      )
      .handle("get", ({ params }) => answerGet(server, "offer", params.id, findOffer, answered))
      .handle("status", ({ params, query }) =>
        Effect.gen(function* () {
          const { snapshot, resource: offer } = yield* callersOffer(params.id)
          const answer = yield* Effect.result(offerStatus.status(snapshot, offer, query.days))
          if (Result.isFailure(answer)) {
            return yield* answerWith(storeUnavailable("The usage statistics cannot be read right now."))
          }
          return answer.success
        })
      )
      .handle("update", (request) => answerUpdate(request, resources.updateOffer, answered))
      .handle("delete", (request) => answerDelete(request, resources.deleteOffer))
      .handle("bulkProcess", ({ payload }) =>
        answerBulk(server, (team, bound, requestId) => processBatch(validation, team, payload, bound, requestId))
      )
  })
)
