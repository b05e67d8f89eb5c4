/**
 * Target groups and offers managed through the API: created for the
 * caller's team, changed with a JSON merge patch (RFC 7396) and deleted;
 * an offer's status moves through its lifecycle. Resources defined in the
 * config directory are read-only here (they change in git); the team rule
 * decides what a caller may name. A target group that offers still use
 * cannot be deleted (the offers are named).
 *
 * Every resource has a version (`versionOf`, a hash of its document): a
 * change or deletion may name the version it was based on, and is refused
 * (`StaleVersion`) when the resource has changed since, so two operators
 * cannot silently overwrite each other. Naming it is optional: a change
 * that names none applies to whatever is current.
 *
 * A change is checked against everything the config loader checks, then
 * stored (`ResourceStore`) and applied to the snapshot before the answer
 * (that one item, `Snapshot.change`), so it serves at once. If the snapshot
 * refuses the result (another broken document, a failing disk), the
 * previous document goes back and is applied again: nothing is half-applied. Changes run one at a
 * time, so check, write and reload never interleave.
 */
import { relative } from "node:path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Semaphore from "effect/Semaphore"
import { type FieldError, formatProblem } from "../domain/errors.ts"
import type { TeamId } from "../domain/Identifiers.ts"
import type { JsonObject } from "../domain/mergePatch.ts"
import type { Offer, OfferStatus } from "../domain/Offer.ts"
import { refusedTransition } from "../domain/offerLifecycle.ts"
import type { TargetGroup } from "../domain/TargetGroup.ts"
import { capitalized, withArticle } from "../domain/words.ts"
import { type ResourceKind, ResourceStore, type ResourceStoreError } from "../resources/ResourceStore.ts"
import { offerDocument, targetGroupDocument } from "../resources/resourceYaml.ts"
import {
  ChangeNotApplied,
  InvalidResource,
  ResourceConflict,
  ResourceNotFound,
  ResourceStoreUnavailable,
  ResourcesError,
  StaleVersion
} from "./ResourcesError.ts"
import { patchedOffer, patchedTargetGroup, versionOf } from "./resourceChanges.ts"
import { type ConfigSnapshot, Snapshot } from "./Snapshot.ts"
import { isStoreUnreadable } from "./sources.ts"
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

/**
 * The version a change is based on: the versions the caller read (any one
 * will do), or `"*"` for "whatever exists". Absent: no condition.
 */
export type ExpectedVersion = "*" | ReadonlyArray<string>

export { versionOf } from "./resourceChanges.ts"

/** The resource of each kind. */
type Resource<K extends ResourceKind> = K extends "targetGroup" ? TargetGroup : Offer

const what: Record<ResourceKind, "target group" | "offer"> = { targetGroup: "target group", offer: "offer" }

const origins = (snapshot: ConfigSnapshot, kind: ResourceKind) =>
  kind === "targetGroup" ? snapshot.config.origins.targetGroups : snapshot.config.origins.offers

/** Where a resource of the snapshot is defined. */
export const sourceOf = (snapshot: ConfigSnapshot, kind: ResourceKind, id: string): ResourceSource =>
  origins(snapshot, kind).get(id)?.store === "config" ? "config" : "api"

/**
 * A stored resource as the snapshot serving it loaded it (defaults filled in
 * as the loader fills them), so its answer and its version are those a read
 * gives from now on.
 */
const loadedGroup = (snapshot: ConfigSnapshot, stored: TargetGroup): Applied<TargetGroup> => ({
  snapshot,
  resource: snapshot.engine.targetGroups.get(stored.id)?.targetGroup ?? stored
})
const loadedOffer = (snapshot: ConfigSnapshot, stored: Offer): Applied<Offer> => ({
  snapshot,
  resource: snapshot.engine.offers.get(stored.id)?.offer ?? stored
})

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
  /**
   * Applies a JSON merge patch to the team's API-created target group: the
   * result is checked as a new one would be (its id and team cannot change).
   */
  updateTargetGroup(
    team: string,
    id: string,
    patch: JsonObject,
    expected?: ExpectedVersion
  ): Effect.Effect<Applied<TargetGroup>, ResourcesError>
  /** Applies a JSON merge patch to the team's API-created offer; a status change follows the offer's lifecycle. */
  updateOffer(
    team: string,
    id: string,
    patch: JsonObject,
    expected?: ExpectedVersion
  ): Effect.Effect<Applied<Offer>, ResourcesError>
  /** Moves the team's API-created offer to `status` (the same status again changes nothing). */
  setOfferStatus(team: string, id: string, status: OfferStatus): Effect.Effect<Applied<Offer>, ResourcesError>
  /** Deletes the team's API-created target group; refused while offers use it. */
  deleteTargetGroup(team: string, id: string, expected?: ExpectedVersion): Effect.Effect<ConfigSnapshot, ResourcesError>
  /** Deletes the team's API-created offer (its usage statistics are kept). */
  deleteOffer(team: string, id: string, expected?: ExpectedVersion): Effect.Effect<ConfigSnapshot, ResourcesError>
}

/** What every change reads and writes: the snapshot in force and the resource store. */
interface Dependencies {
  readonly snapshots: Snapshot["Service"]
  readonly store: ResourceStore["Service"]
}

/**
 * Why a new resource of `team` cannot take `id` (in the config, or in the store even as a broken
 * document). An id the team cannot see is "not available", never "exists": reading it is a 404,
 * so creating it must not tell that it exists, or whose it is.
 */
const checkIdFree = Effect.fnUntraced(function* (
  { snapshots, store }: Dependencies,
  team: string,
  kind: ResourceKind,
  id: string
) {
  const snapshot = snapshots.current()
  const origin = origins(snapshot, kind).get(id)
  const stored = origin === undefined ? yield* store.read(kind, id).pipe(Effect.catch(storeUnavailable)) : undefined
  if (origin === undefined && stored === undefined) return
  const visible =
    origin !== undefined &&
    (kind === "targetGroup"
      ? visibleTargetGroup(snapshot.engine, team, id) !== undefined
      : visibleOffer(snapshot.engine, team, id) !== undefined)
  const detail = !visible
    ? `The ${what[kind]} id "${id}" is not available; choose another id.`
    : origin.store === "config"
      ? `${capitalized(withArticle(what[kind]))} "${id}" is already defined in the config directory; choose another id.`
      : `${capitalized(withArticle(what[kind]))} "${id}" already exists; choose another id.`
  return yield* fail(new ResourceConflict({ detail }))
})

/** Refuses a new resource when the team holds as many API-created ones as `limits.resourcesPerTeam` allows. */
const checkRoom = (snapshots: Snapshot["Service"], team: string) => {
  const { config } = snapshots.current()
  const limit = config.settings.limits.resourcesPerTeam
  const stored = (
    items: ReadonlyArray<{ readonly id: string; readonly team?: string | undefined }>,
    kind: ResourceKind
  ) =>
    items.filter((item) => item.team === team && origins(snapshots.current(), kind).get(item.id)?.store === "data")
      .length
  const held = stored(config.targetGroups, "targetGroup") + stored(config.offers, "offer")
  return held < limit
    ? Effect.void
    : fail(
        new ResourceConflict({
          detail: `Team "${team}" already has ${held} target groups and offers created through the API, the most limits.resourcesPerTeam allows (${limit}); remove some, or ask the operator to raise the limit.`
        })
      )
}

/** Stores `text` under `id` (or removes it: undefined) and applies it; when refused puts the previous document back. */
const storeAndReload = Effect.fnUntraced(function* (
  { snapshots, store }: Dependencies,
  kind: ResourceKind,
  id: string,
  text: string | undefined
) {
  const before = yield* store.read(kind, id).pipe(Effect.catch(storeUnavailable))
  if (text === undefined) yield* store.remove(kind, id).pipe(Effect.catch(storeUnavailable))
  else {
    // Over the document read just now only: a daemon sharing the store that wrote it meanwhile came first.
    const written = yield* store.write(kind, id, text, before?.text ?? null).pipe(Effect.catch(storeUnavailable))
    if (!written) {
      return yield* fail(
        new ResourceConflict({
          detail: `The ${what[kind]} "${id}" was changed by another request at the same time; read it again and retry.`
        })
      )
    }
  }
  // This one item applied alone, or a full reload where only that can tell (`Snapshot.change`).
  const outcome = yield* snapshots.change([{ kind, id }])
  if (outcome.ok) return snapshots.current()
  const restore = before === undefined ? store.remove(kind, id) : store.write(kind, id, before.text)
  yield* restore.pipe(Effect.catch(storeUnavailable))
  yield* snapshots.change([{ kind, id }])
  // A store that could not be read (it went away after the write) checked nothing: the change is undone, to retry.
  const unreadable = outcome.problems.find(isStoreUnreadable)
  if (unreadable !== undefined) {
    return yield* fail(
      new ResourceStoreUnavailable({
        detail: `The change could not be checked, as a store cannot be read now (${unreadable.message}); nothing was changed. Try again later.`
      })
    )
  }
  return yield* fail(new ChangeNotApplied({ problems: outcome.problems.map(formatProblem) }))
})

/**
 * The team's API-created resource `id` as it is now, ready to change: not found when the team cannot
 * see it, a conflict when it is defined in the config directory, stale when it is not the version
 * the caller based the change on.
 */
const changeable = Effect.fnUntraced(function* <K extends ResourceKind>(
  snapshots: Snapshot["Service"],
  team: string,
  kind: K,
  id: string,
  expected: ExpectedVersion | undefined,
  action: string
) {
  const lookUp = (snapshot: ConfigSnapshot) =>
    (kind === "targetGroup"
      ? visibleTargetGroup(snapshot.engine, team, id)?.targetGroup
      : visibleOffer(snapshot.engine, team, id)?.offer) as Resource<K> | undefined
  let snapshot = snapshots.current()
  let resource = lookUp(snapshot)
  if (resource === undefined) {
    // Perhaps written through another daemon a moment ago: catch up with the shared store, then look again.
    yield* snapshots.catchUp()
    snapshot = snapshots.current()
    resource = lookUp(snapshot)
  }
  if (resource === undefined) return yield* fail(new ResourceNotFound({ kind: what[kind], id }))
  const origin = origins(snapshot, kind).get(id)
  if (origin?.store === "config") {
    const configDir = snapshot.config.configDir ?? ""
    const file = relative(configDir, origin.path).split("\\").join("/")
    return yield* fail(
      new ResourceConflict({
        detail: `The ${what[kind]} "${id}" is defined in the config directory (${file}), which the API does not change: ${action} it in that file in git.`
      })
    )
  }
  if (resource.team !== team) {
    // A shared target group is visible to every team but belongs to none: only git changes it.
    return yield* fail(
      new ResourceConflict({ detail: `The ${what[kind]} "${id}" is shared; only its owner can ${action} it.` })
    )
  }
  if (expected !== undefined && expected !== "*") {
    const current = versionOf(kind, resource)
    if (!expected.includes(current)) {
      return yield* fail(new StaleVersion({ kind: what[kind], id, current }))
    }
  }
  return { snapshot, resource }
})

/** Field errors for target groups an offer of `team` names but cannot use. */
const unusableTargetGroups = (
  snapshots: Snapshot["Service"],
  team: string,
  groupIds: ReadonlyArray<string>
): Array<FieldError> => {
  const { engine } = snapshots.current()
  return groupIds.flatMap((groupId, i) =>
    visibleTargetGroup(engine, team, groupId) === undefined
      ? [
          {
            field: `/targetGroups/${i}`,
            code: "UNKNOWN_TARGET_GROUP",
            message: `there is no target group "${groupId}" that team "${team}" can use (its own or a shared one)`
          }
        ]
      : []
  )
}

const createTargetGroup = Effect.fn("Resources.createTargetGroup")(function* (
  dependencies: Dependencies,
  team: string,
  input: NewTargetGroup
) {
  if (input.team !== undefined && input.team !== team) {
    return yield* fail(
      new InvalidResource({ detail: "The target group is not valid.", errors: [wrongTeam("targetGroup", team)] })
    )
  }
  yield* checkIdFree(dependencies, team, "targetGroup", input.id)
  yield* checkRoom(dependencies.snapshots, team)
  const group: TargetGroup = { ...input, team: team as TeamId }
  return loadedGroup(yield* storeAndReload(dependencies, "targetGroup", group.id, targetGroupDocument(group)), group)
})

const createOffer = Effect.fn("Resources.createOffer")(function* (
  dependencies: Dependencies,
  team: string,
  input: NewOffer
) {
  const errors: Array<FieldError> = []
  if (input.team !== undefined && input.team !== team) errors.push(wrongTeam("offer", team))
  errors.push(...unusableTargetGroups(dependencies.snapshots, team, input.targetGroups))
  if (errors.length > 0) return yield* fail(new InvalidResource({ detail: "The offer is not valid.", errors }))
  yield* checkIdFree(dependencies, team, "offer", input.id)
  yield* checkRoom(dependencies.snapshots, team)
  const offer: Offer = { ...input, team: team as TeamId }
  return loadedOffer(yield* storeAndReload(dependencies, "offer", offer.id, offerDocument(offer)), offer)
})

/** The target group `patch` makes of `group`, or why it is not valid. */
const patchedGroupChecked = (team: string, group: TargetGroup, patch: JsonObject) => {
  const next = patchedTargetGroup(team, group, patch)
  return next instanceof InvalidResource ? fail(next) : Effect.succeed(next)
}

/** The offer `patch` makes of `offer`, or why it is not valid: its fields, its target groups, its lifecycle. */
const patchedOfferChecked = (snapshots: Snapshot["Service"], team: string, offer: Offer, patch: JsonObject) => {
  const next = patchedOffer(team, offer, patch)
  if (next instanceof InvalidResource) return fail(next)
  const unusable = unusableTargetGroups(snapshots, team, next.targetGroups)
  if (unusable.length > 0) {
    return fail(new InvalidResource({ detail: "The changed offer is not valid.", errors: unusable }))
  }
  const refused = refusedTransition(offer.status, next.status)
  if (refused !== undefined) {
    return fail(new ResourceConflict({ detail: `The offer "${offer.id}" cannot become ${next.status}: ${refused}.` }))
  }
  return Effect.succeed(next)
}

/**
 * Applies a JSON merge patch to the team's API-created resource of `kind`
 * (checked as a new one would be); a patch that changes nothing stores nothing.
 */
const update = <K extends ResourceKind>(
  dependencies: Dependencies,
  kind: K,
  team: string,
  id: string,
  patch: JsonObject,
  expected: ExpectedVersion | undefined
): Effect.Effect<Applied<Resource<K>>, ResourcesError> =>
  Effect.gen(function* () {
    const { snapshot, resource } = yield* changeable(dependencies.snapshots, team, kind, id, expected, "change")
    const next: TargetGroup | Offer =
      kind === "targetGroup"
        ? yield* patchedGroupChecked(team, resource as TargetGroup, patch)
        : yield* patchedOfferChecked(dependencies.snapshots, team, resource as Offer, patch)
    if (versionOf(kind, next) === versionOf(kind, resource)) return { snapshot, resource }
    const stored = yield* storeAndReload(
      dependencies,
      kind,
      id,
      kind === "targetGroup" ? targetGroupDocument(next as TargetGroup) : offerDocument(next as Offer)
    )
    return (
      kind === "targetGroup" ? loadedGroup(stored, next as TargetGroup) : loadedOffer(stored, next as Offer)
    ) as Applied<Resource<K>>
  }).pipe(Effect.withSpan(kind === "targetGroup" ? "Resources.updateTargetGroup" : "Resources.updateOffer"))

const deleteTargetGroup = Effect.fn("Resources.deleteTargetGroup")(function* (
  dependencies: Dependencies,
  team: string,
  id: string,
  expected?: ExpectedVersion
) {
  const { snapshot } = yield* changeable(dependencies.snapshots, team, "targetGroup", id, expected, "delete")
  const users = snapshot.config.offers.filter((offer) => offer.targetGroups.includes(id as never))
  if (users.length > 0) {
    const names = users.map((offer) => `"${offer.id}"`).join(", ")
    return yield* fail(
      new ResourceConflict({
        detail: `The target group "${id}" is used by ${users.length === 1 ? "the offer" : "the offers"} ${names}; remove it from ${users.length === 1 ? "that offer" : "those offers"} (or delete ${users.length === 1 ? "it" : "them"}) first.`
      })
    )
  }
  return yield* storeAndReload(dependencies, "targetGroup", id, undefined)
})

const deleteOffer = Effect.fn("Resources.deleteOffer")(function* (
  dependencies: Dependencies,
  team: string,
  id: string,
  expected?: ExpectedVersion
) {
  yield* changeable(dependencies.snapshots, team, "offer", id, expected, "delete")
  return yield* storeAndReload(dependencies, "offer", id, undefined)
})

/** The service over `dependencies`: changes run one at a time, so check, write and reload never interleave. */
const makeResources = (dependencies: Dependencies, oneAtATime: Semaphore.Semaphore): ResourcesService => ({
  createTargetGroup: (team, input) => oneAtATime.withPermit(createTargetGroup(dependencies, team, input)),
  createOffer: (team, input) => oneAtATime.withPermit(createOffer(dependencies, team, input)),
  updateTargetGroup: (team, id, patch, expected) =>
    oneAtATime.withPermit(update(dependencies, "targetGroup", team, id, patch, expected)),
  updateOffer: (team, id, patch, expected) =>
    oneAtATime.withPermit(update(dependencies, "offer", team, id, patch, expected)),
  setOfferStatus: (team, id, status) =>
    oneAtATime.withPermit(update(dependencies, "offer", team, id, { status }, undefined)),
  deleteTargetGroup: (team, id, expected) => oneAtATime.withPermit(deleteTargetGroup(dependencies, team, id, expected)),
  deleteOffer: (team, id, expected) => oneAtATime.withPermit(deleteOffer(dependencies, team, id, expected))
})

export class Resources extends Context.Service<Resources, ResourcesService>()("campusgate/app/Resources") {
  static readonly layer: Layer.Layer<Resources, never, Snapshot | ResourceStore> = Layer.effect(
    Resources,
    Effect.map(
      Effect.all([Effect.service(Snapshot), Effect.service(ResourceStore), Semaphore.make(1)]),
      ([snapshots, store, oneAtATime]) => makeResources({ snapshots, store }, oneAtATime)
    )
  )
}
