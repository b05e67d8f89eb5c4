/**
 * Target groups and offers managed through the API: created for the
 * caller's team, and offers moved through their lifecycle. Resources
 * defined in the config directory are read-only here (they change in git);
 * the team rule decides what a caller may name.
 *
 * A change is checked against everything the config loader checks, then
 * stored (`ResourceStore`) and the snapshot reloaded before the answer, so
 * it serves at once. If the reload rejects the result (another broken
 * document, a failing disk), the previous document goes back and the
 * snapshot is reloaded again: nothing is half-applied. Changes run one at a
 * time, so check, write and reload never interleave.
 */
import { relative } from "node:path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Semaphore from "effect/Semaphore"
import { type FieldError, formatProblem } from "../domain/errors.ts"
import type { TeamId } from "../domain/Identifiers.ts"
import type { Offer, OfferStatus } from "../domain/Offer.ts"
import { refusedTransition } from "../domain/offerLifecycle.ts"
import type { TargetGroup } from "../domain/TargetGroup.ts"
import { type ResourceKind, ResourceStore, type ResourceStoreError } from "../resources/ResourceStore.ts"
import { offerDocument, targetGroupDocument } from "../resources/resourceYaml.ts"
import {
  ChangeNotApplied,
  InvalidResource,
  ResourceConflict,
  ResourceNotFound,
  ResourceStoreUnavailable,
  ResourcesError
} from "./ResourcesError.ts"
import { type ConfigSnapshot, Snapshot } from "./Snapshot.ts"
import { visibleOffer, visibleTargetGroup } from "./visibility.ts"

/** Where a resource is defined: `config` (read-only through the API) or `api` (the resource store). */
export type ResourceSource = "config" | "api"

/** A resource as given to create it: its fields, the team optional (it must be the caller's). */
export type NewTargetGroup = Omit<TargetGroup, "team"> & { readonly team?: string | undefined }
export type NewOffer = Omit<Offer, "team"> & { readonly team?: string | undefined }

/** A change that serves, with the snapshot that serves it. */
export interface Applied<A> {
  readonly snapshot: ConfigSnapshot
  readonly resource: A
}

const what: Record<ResourceKind, "target group" | "offer"> = { targetGroup: "target group", offer: "offer" }

const origins = (snapshot: ConfigSnapshot, kind: ResourceKind) =>
  kind === "targetGroup" ? snapshot.config.origins.targetGroups : snapshot.config.origins.offers

/** Where a resource of the snapshot is defined. */
export const sourceOf = (snapshot: ConfigSnapshot, kind: ResourceKind, id: string): ResourceSource =>
  origins(snapshot, kind).get(id)?.store === "config" ? "config" : "api"

const fail = (reason: ResourcesError["reason"]) => Effect.fail(new ResourcesError({ reason }))

const storeUnavailable = (error: ResourceStoreError) =>
  fail(
    new ResourceStoreUnavailable({
      detail: `The resource store cannot be written now (${error.message}); nothing was changed or accepted. Try again later.`
    })
  )

const wrongTeam = (kind: ResourceKind, team: string): FieldError => ({
  field: "/team",
  code: "WRONG_TEAM",
  message: `this API key creates ${what[kind]}s of team "${team}" only; leave team out or set it to "${team}"`
})

export interface ResourcesService {
  createTargetGroup(team: string, input: NewTargetGroup): Effect.Effect<Applied<TargetGroup>, ResourcesError>
  createOffer(team: string, input: NewOffer): Effect.Effect<Applied<Offer>, ResourcesError>
  /** Moves the team's API-created offer to `status` (the same status again changes nothing). */
  setOfferStatus(team: string, id: string, status: OfferStatus): Effect.Effect<Applied<Offer>, ResourcesError>
}

export class Resources extends Context.Service<Resources, ResourcesService>()("campusgate/app/Resources") {
  static readonly layer: Layer.Layer<Resources, never, Snapshot | ResourceStore> = Layer.effect(
    Resources,
    Effect.gen(function* () {
      const snapshots = yield* Snapshot
      const store = yield* ResourceStore
      const oneAtATime = yield* Semaphore.make(1)

      /**
       * Why a new resource of `team` cannot take `id` (in the config, or in the store even as a broken
       * document). An id the team cannot see is "not available", never "exists": reading it is a 404,
       * so creating it must not tell that it exists, or whose it is.
       */
      const checkIdFree = Effect.fnUntraced(function* (team: string, kind: ResourceKind, id: string) {
        const snapshot = snapshots.current()
        const origin = origins(snapshot, kind).get(id)
        const stored =
          origin === undefined ? yield* store.read(kind, id).pipe(Effect.catch(storeUnavailable)) : undefined
        if (origin === undefined && stored === undefined) return
        const visible =
          origin !== undefined &&
          (kind === "targetGroup"
            ? visibleTargetGroup(snapshot.engine, team, id) !== undefined
            : visibleOffer(snapshot.engine, team, id) !== undefined)
        const detail = !visible
          ? `The ${what[kind]} id "${id}" is not available; choose another id.`
          : origin.store === "config"
            ? `A ${what[kind]} "${id}" is already defined in the config directory; choose another id.`
            : `A ${what[kind]} "${id}" already exists; choose another id.`
        return yield* fail(new ResourceConflict({ detail }))
      })

      /** Refuses a new resource when the team holds as many API-created ones as `limits.resourcesPerTeam` allows. */
      const checkRoom = (team: string) => {
        const { config } = snapshots.current()
        const limit = config.settings.limits.resourcesPerTeam
        const stored = (
          items: ReadonlyArray<{ readonly id: string; readonly team?: string | undefined }>,
          kind: ResourceKind
        ) =>
          items.filter(
            (item) => item.team === team && origins(snapshots.current(), kind).get(item.id)?.store === "data"
          ).length
        const held = stored(config.targetGroups, "targetGroup") + stored(config.offers, "offer")
        return held < limit
          ? Effect.void
          : fail(
              new ResourceConflict({
                detail: `Team "${team}" already has ${held} target groups and offers created through the API, the most limits.resourcesPerTeam allows (${limit}); remove some, or ask the operator to raise the limit.`
              })
            )
      }

      /** Stores `text` under `id` and reloads; on a rejected reload puts the previous document back. */
      const store_ = Effect.fnUntraced(function* (kind: ResourceKind, id: string, text: string) {
        const before = yield* store.read(kind, id).pipe(Effect.catch(storeUnavailable))
        yield* store.write(kind, id, text).pipe(Effect.catch(storeUnavailable))
        const outcome = yield* snapshots.reload()
        if (outcome.ok) return snapshots.current()
        const restore = before === undefined ? store.remove(kind, id) : store.write(kind, id, before.text)
        yield* restore.pipe(Effect.catch(storeUnavailable))
        yield* snapshots.reload()
        return yield* fail(new ChangeNotApplied({ problems: outcome.problems.map(formatProblem) }))
      })

      const createTargetGroup = Effect.fn("Resources.createTargetGroup")(function* (
        team: string,
        input: NewTargetGroup
      ) {
        if (input.team !== undefined && input.team !== team) {
          return yield* fail(
            new InvalidResource({ detail: "The target group is not valid.", errors: [wrongTeam("targetGroup", team)] })
          )
        }
        yield* checkIdFree(team, "targetGroup", input.id)
        yield* checkRoom(team)
        const group: TargetGroup = { ...input, team: team as TeamId }
        const snapshot = yield* store_("targetGroup", group.id, targetGroupDocument(group))
        return { snapshot, resource: group }
      })

      const createOffer = Effect.fn("Resources.createOffer")(function* (team: string, input: NewOffer) {
        const { engine } = snapshots.current()
        const errors: Array<FieldError> = []
        if (input.team !== undefined && input.team !== team) errors.push(wrongTeam("offer", team))
        input.targetGroups.forEach((groupId, i) => {
          if (visibleTargetGroup(engine, team, groupId) === undefined) {
            errors.push({
              field: `/targetGroups/${i}`,
              code: "UNKNOWN_TARGET_GROUP",
              message: `there is no target group "${groupId}" that team "${team}" can use (its own or a shared one)`
            })
          }
        })
        if (errors.length > 0) return yield* fail(new InvalidResource({ detail: "The offer is not valid.", errors }))
        yield* checkIdFree(team, "offer", input.id)
        yield* checkRoom(team)
        const offer: Offer = { ...input, team: team as TeamId }
        const snapshot = yield* store_("offer", offer.id, offerDocument(offer))
        return { snapshot, resource: offer }
      })

      const setOfferStatus = Effect.fn("Resources.setOfferStatus")(function* (
        team: string,
        id: string,
        status: OfferStatus
      ) {
        const snapshot = snapshots.current()
        const offer = visibleOffer(snapshot.engine, team, id)?.offer
        if (offer === undefined) return yield* fail(new ResourceNotFound({ kind: "offer", id }))
        const origin = snapshot.config.origins.offers.get(id)
        if (origin?.store === "config") {
          const configDir = snapshot.config.configDir ?? ""
          const file = relative(configDir, origin.path).split("\\").join("/")
          return yield* fail(
            new ResourceConflict({
              detail: `The offer "${id}" is defined in the config directory (${file}), which the API does not change: change its status in that file in git.`
            })
          )
        }
        const refused = refusedTransition(offer.status, status)
        if (refused !== undefined) {
          return yield* fail(new ResourceConflict({ detail: `The offer "${id}" cannot become ${status}: ${refused}.` }))
        }
        if (offer.status === status) return { snapshot, resource: offer }
        const next: Offer = { ...offer, status }
        return { snapshot: yield* store_("offer", id, offerDocument(next)), resource: next }
      })

      return Resources.of({
        createTargetGroup: (team, input) => oneAtATime.withPermit(createTargetGroup(team, input)),
        createOffer: (team, input) => oneAtATime.withPermit(createOffer(team, input)),
        setOfferStatus: (team, id, status) => oneAtATime.withPermit(setOfferStatus(team, id, status))
      })
    })
  )
}
