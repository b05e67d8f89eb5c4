/**
 * Handlers of the offer endpoints. Reads answer from the config snapshot in
 * force; writes go to the data directory and serve before the answer
 * (`writeResource`). A caller sees only its team's offers: another team's
 * offer is 404, in a batch a per-item NOT_FOUND. Offers defined in the
 * config directory are read-only here (409): they change in git.
 */
import { relative } from "node:path"
import * as Effect from "effect/Effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as Result from "effect/Result"
import { CampusgateApi } from "../../api/Api.ts"
import { Caller } from "../../api/Authorization.ts"
import type { BulkProcessRequest, BulkProcessResponse, CreateOfferRequest, OfferResource } from "../../api/offers.ts"
import {
  type BadRequest,
  type Conflict,
  type FieldError,
  type InternalError,
  type NotFound,
  ServiceUnavailable
} from "../../api/problems.ts"
import { BULK_MAX_EMAILS } from "../../api/validation.ts"
import type { ConfigSnapshot } from "../../app/Snapshot.ts"
import { Snapshot } from "../../app/Snapshot.ts"
import { Validation } from "../../app/Validation.ts"
import { visibleOffer, visibleOffers, visibleTargetGroup } from "../../app/visibility.ts"
import { directoriesOf } from "../../config/loadConfig.ts"
import { OfferNotFound } from "../../domain/errors.ts"
import type { TeamId } from "../../domain/Identifiers.ts"
import { effectiveStatus, type Offer, type OfferStatus } from "../../domain/Offer.ts"
import { offerStatusAt, refusedTransition } from "../../domain/offerLifecycle.ts"
import { UsageStatistics } from "../../stats/UsageStatistics.ts"
import { saveOffer } from "../../store/resourceFiles.ts"
import { currentRequestId } from "../requestId.ts"
import { orStoreUnavailable } from "../storeUnavailable.ts"
import { byId, conflict, idTaken, invalid, notFound, paginate, sourceOf, writeResource } from "./resources.ts"

type Server = Snapshot["Service"]

const toResource = (snapshot: ConfigSnapshot, offer: Offer): OfferResource => ({
  ...offer,
  effectiveStatus: effectiveStatus(offer, snapshot.engine.now()),
  source: sourceOf(snapshot.config, "offer", offer.id)
})

/** The team's offer with this id; undefined for an unknown id and for another team's offer alike. */
const teamOffer = (snapshot: ConfigSnapshot, team: string, id: string): Offer | undefined =>
  visibleOffer(snapshot.engine, team, id)?.offer

const createOffer = (
  server: Server,
  team: string,
  payload: CreateOfferRequest,
  requestId: string
): Result.Result<OfferResource, BadRequest | Conflict | InternalError> => {
  const snapshot = server.current()
  const errors: Array<FieldError> = []
  if (payload.team !== undefined && payload.team !== team) {
    errors.push({
      field: "/team",
      code: "WRONG_TEAM",
      message: `this API key creates offers of team "${team}" only; leave team out or set it to "${team}"`
    })
  }
  payload.targetGroups.forEach((groupId, i) => {
    if (visibleTargetGroup(snapshot.engine, team, groupId) === undefined) {
      errors.push({
        field: `/targetGroups/${i}`,
        code: "UNKNOWN_TARGET_GROUP",
        message: `there is no target group "${groupId}" that team "${team}" can use (its own or a shared one)`
      })
    }
  })
  if (errors.length > 0) return Result.fail(invalid(requestId, "The offer is not valid.", errors))
  const taken = idTaken(snapshot.config, "offer", payload.id)
  if (taken !== undefined) return Result.fail(conflict(requestId, taken))
  const { effectiveStatus: _effective, source: _source, ...fields } = payload
  const offer: Offer = { ...fields, team: team as TeamId }
  const failed = writeResource(server, "offer", offer.id, (dataDir) => saveOffer(dataDir, offer), requestId)
  return failed === undefined ? Result.succeed(toResource(server.current(), offer)) : Result.fail(failed)
}

const updateOffer = (
  server: Server,
  team: string,
  id: string,
  status: OfferStatus,
  requestId: string
): Result.Result<OfferResource, NotFound | Conflict | InternalError> => {
  const snapshot = server.current()
  const offer = teamOffer(snapshot, team, id)
  if (offer === undefined) return Result.fail(notFound("offer", id, requestId))
  const origin = snapshot.config.origins.offers.get(id)
  if (origin?.store === "config") {
    const file = relative(directoriesOf(snapshot.config).configDir, origin.path).split("\\").join("/")
    return Result.fail(
      conflict(
        requestId,
        `The offer "${id}" is defined in the config directory (${file}), which the API does not change: change its status in that file in git.`
      )
    )
  }
  const refused = refusedTransition(offer.status, status)
  if (refused !== undefined) {
    return Result.fail(conflict(requestId, `The offer "${id}" cannot become ${status}: ${refused}.`))
  }
  if (offer.status === status) return Result.succeed(toResource(snapshot, offer))
  const next: Offer = { ...offer, status }
  const failed = writeResource(server, "offer", id, (dataDir) => saveOffer(dataDir, next), requestId)
  return failed === undefined ? Result.succeed(toResource(server.current(), next)) : Result.fail(failed)
}

const bulkProcess = (
  validation: Validation["Service"],
  team: string,
  payload: BulkProcessRequest,
  requestId: string
): Result.Result<BulkProcessResponse, BadRequest> => {
  const total = payload.requests.length
  if (total > BULK_MAX_EMAILS) {
    return Result.fail(
      invalid(requestId, "The batch is too large.", [
        {
          field: "/requests",
          code: "TOO_MANY",
          message: `at most ${BULK_MAX_EMAILS} requests per batch (got ${total}); use POST /api/v1/validate/bulk-async for larger batches`
        }
      ])
    )
  }
  let eligible = 0
  let errors = 0
  const results = validation.batch(team, payload.requests).map((result, i): BulkProcessResponse["results"][number] => {
    if (result instanceof OfferNotFound) {
      errors++
      const { offerId, email } = payload.requests[i]!
      return { offerId, email, error: { code: "NOT_FOUND", message: `There is no offer "${offerId}".` } }
    }
    if (result.isValid) eligible++
    return result
  })
  return Result.succeed({
    results,
    summary: { total, eligible, ineligible: total - eligible - errors, errors },
    requestId
  })
}

export const OffersHandlers = HttpApiBuilder.group(
  CampusgateApi,
  "offers",
  Effect.fn(function* (handlers) {
    const server = yield* Snapshot
    const validation = yield* Validation
    const usage = yield* UsageStatistics
    /** The caller's team's offer `id` with the snapshot it was read from; another team's is 404. */
    const callersOffer = (id: string) =>
      Effect.gen(function* () {
        const requestId = yield* currentRequestId
        const caller = yield* Caller
        const snapshot = server.current()
        const offer = teamOffer(snapshot, caller.team, id)
        if (offer === undefined) return yield* notFound("offer", id, requestId)
        return { snapshot, offer }
      })
    return handlers
      .handle("create", ({ payload }) =>
        Effect.gen(function* () {
          const requestId = yield* currentRequestId
          const caller = yield* Caller
          return yield* Effect.fromResult(createOffer(server, caller.team, payload, requestId))
        }).pipe(orStoreUnavailable)
      )
      .handle("list", ({ query }) =>
        Effect.gen(function* () {
          const requestId = yield* currentRequestId
          const caller = yield* Caller
          const snapshot = server.current()
          const offers = visibleOffers(snapshot.engine, caller.team)
            .map((offer) => toResource(snapshot, offer))
            .filter((offer) => query.status === undefined || offer.effectiveStatus === query.status)
            .sort(byId)
          const page = paginate(offers, query, requestId)
          return "data" in page ? page : yield* page
        })
      )
      .handle("get", ({ params }) =>
        Effect.map(callersOffer(params.id), ({ snapshot, offer }) => toResource(snapshot, offer))
      )
      .handle("status", ({ params }) =>
        Effect.gen(function* () {
          const { snapshot, offer } = yield* callersOffer(params.id)
          const { status, reason } = offerStatusAt(offer, snapshot.engine.now())
          const requestId = yield* currentRequestId
          const counted = yield* usage.usage(offer.id).pipe(
            Effect.catch(() =>
              Effect.fail(
                new ServiceUnavailable({
                  code: "SERVICE_ERROR",
                  detail: "The usage statistics cannot be read right now.",
                  requestId,
                  retryAfterSeconds: 5
                })
              )
            )
          )
          return {
            id: offer.id,
            status,
            statusReason: reason,
            window: { startsAt: offer.startsAt ?? null, endsAt: offer.endsAt ?? null },
            usage: counted
          }
        })
      )
      .handle("update", ({ params, payload }) =>
        Effect.gen(function* () {
          const requestId = yield* currentRequestId
          const caller = yield* Caller
          return yield* Effect.fromResult(updateOffer(server, caller.team, params.id, payload.status, requestId))
        }).pipe(orStoreUnavailable)
      )
      .handle("bulkProcess", ({ payload }) =>
        Effect.gen(function* () {
          const requestId = yield* currentRequestId
          const caller = yield* Caller
          return yield* Effect.fromResult(bulkProcess(validation, caller.team, payload, requestId))
        })
      )
  })
)
