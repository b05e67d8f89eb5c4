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
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as Result from "effect/Result"
import { API_PREFIX, CampusgateApi } from "../../api/Api.ts"
import { Caller } from "../../api/Authorization.ts"
import type { BulkProcessRequest, OfferResource } from "../../api/offers.ts"
import { type BadRequest, storeUnavailable } from "../../api/problems.ts"
import { Resources, sourceOf, versionOf } from "../../app/Resources.ts"
import { type ConfigSnapshot, Snapshot } from "../../app/Snapshot.ts"
import { Validation, ValidationError } from "../../app/Validation.ts"
import { visibleOffer, visibleOffers } from "../../app/visibility.ts"
import { effectiveStatus, type Offer } from "../../domain/Offer.ts"
import { lastDays } from "../../domain/OfferUsage.ts"
import { offerStatusAt } from "../../domain/offerLifecycle.ts"
import { UsageStatistics } from "../../stats/UsageStatistics.ts"
import { JsonBytes } from "../jsonBytes.ts"
import { answerResourcesError } from "../problemOf.ts"
import { answerWith } from "../problemResponse.ts"
import { currentRequestId } from "../requestId.ts"
import { jsonBytesResponse, offerResultText } from "../resultJson.ts"
import {
  answerCreateError,
  answerRead,
  byId,
  createdAnswer,
  entityTag,
  expectedVersion,
  invalid,
  notFound,
  paginate
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

/** The offer as answered, with its tag. */
const versioned = (snapshot: ConfigSnapshot, offer: Offer) => HttpApiSchema.withHeaders(answered(snapshot, offer))

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
    const usage = yield* UsageStatistics
    /** The caller's team's offer `id` with the snapshot it was read from; another team's is 404. */
    const callersOffer = (id: string) =>
      Effect.gen(function* () {
        const caller = yield* Caller
        const snapshot = server.current()
        const offer = visibleOffer(snapshot.engine, caller.team, id)?.offer
        if (offer === undefined) return yield* notFound("offer", id)
        return { snapshot, offer }
      })
    return handlers
      .handle("create", ({ payload }) =>
        Effect.gen(function* () {
          const caller = yield* Caller
          const { effectiveStatus: _effective, source: _source, ...fields } = payload
          const { snapshot, resource } = yield* resources.createOffer(caller.team, fields)
          const location = `${API_PREFIX}/offers/${resource.id}`
          const { body, headers } = answered(snapshot, resource)
          return createdAnswer(location, body, headers.etag)
        }).pipe(Effect.catchTag("ResourcesError", answerCreateError))
      )
      .handle("list", ({ query }) =>
        Effect.gen(function* () {
          const caller = yield* Caller
          const snapshot = server.current()
          const offers = visibleOffers(snapshot.engine, caller.team)
            .map((offer) => toResource(snapshot, offer))
            .filter((offer) => query.status === undefined || offer.effectiveStatus === query.status)
            .sort(byId)
          const page = paginate(offers, query)
          return "data" in page ? page : yield* page
        })
      )
      .handle("get", ({ params }) =>
        Effect.flatMap(callersOffer(params.id), ({ snapshot, offer }) => answerRead(answered(snapshot, offer)))
      )
      .handle("status", ({ params, query }) =>
        Effect.gen(function* () {
          const { snapshot, offer } = yield* callersOffer(params.id)
          const { status, reason } = offerStatusAt(offer, snapshot.engine.now())
          const counted = yield* Effect.result(usage.usage(offer.id))
          if (Result.isFailure(counted)) {
            return yield* answerWith(storeUnavailable("The usage statistics cannot be read right now."))
          }
          return {
            id: offer.id,
            status,
            statusReason: reason,
            window: { startsAt: offer.startsAt ?? null, endsAt: offer.endsAt ?? null },
            usage:
              query.days === undefined
                ? counted.success
                : { ...counted.success, daily: lastDays(counted.success.daily, query.days, snapshot.engine.now()) }
          }
        })
      )
      .handle("update", ({ params, headers, payload }) =>
        Effect.gen(function* () {
          const caller = yield* Caller
          const expected = expectedVersion(headers["if-match"])
          const { snapshot, resource } = yield* resources.updateOffer(caller.team, params.id, payload, expected)
          return versioned(snapshot, resource)
        }).pipe(Effect.catchTag("ResourcesError", answerResourcesError))
      )
      .handle("delete", ({ params, headers }) =>
        Effect.gen(function* () {
          const caller = yield* Caller
          yield* resources.deleteOffer(caller.team, params.id, expectedVersion(headers["if-match"]))
        }).pipe(Effect.catchTag("ResourcesError", answerResourcesError))
      )
      .handle("bulkProcess", ({ payload }) =>
        Effect.gen(function* () {
          const requestId = yield* currentRequestId
          const caller = yield* Caller
          const bound = server.current().config.settings.limits.bulkMaxEmails
          const answer = processBatch(validation, caller.team, payload, bound, requestId)
          return answer instanceof Uint8Array ? jsonBytesResponse(answer) : yield* answer
        })
      )
  })
)
