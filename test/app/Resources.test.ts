import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Resources, versionOf } from "../../src/app/Resources.ts"
import { LiveSnapshot, Snapshot } from "../../src/app/Snapshot.ts"
import { directorySource } from "../../src/app/sources.ts"
import { InvalidConfiguration } from "../../src/domain/errors.ts"
import { ResourceStore } from "../../src/resources/ResourceStore.ts"
import { makeDirs, settingsYaml, validConfig } from "../config/configFiles.ts"

/** Resources over a config directory, with API-created resources in a memory store. */
const setup = (files = validConfig) => {
  const dirs = makeDirs(files)
  const layer = Layer.unwrap(
    Effect.gen(function* () {
      const store = yield* ResourceStore
      const live = LiveSnapshot.loadSync(directorySource({ ...dirs, env: {} }, { resources: store }))
      if (live instanceof InvalidConfiguration) throw live
      return Resources.layer.pipe(Layer.provideMerge(Snapshot.layer(live)))
    })
  ).pipe(Layer.provideMerge(ResourceStore.layerMemory))
  return { layer, dirs }
}

const reasonOf = <A, R>(effect: Effect.Effect<A, { readonly reason: { readonly _tag: string } }, R>) =>
  Effect.map(Effect.flip(effect), (error) => error.reason)

const group = (id: string) =>
  ({ id: id as never, name: id, criteria: { domains: { allow: [`${id}.example`] } } }) as never

describe("Resources", () => {
  it.effect("creates for the caller's team; the change serves before the answer", () => {
    const { layer } = setup()
    return Effect.gen(function* () {
      const resources = yield* Resources
      const snapshots = yield* Snapshot
      const created = yield* resources.createTargetGroup("acme", group("staff"))
      expect(created.resource.team).toBe("acme")
      expect(snapshots.current().engine.targetGroups.get("staff")?.targetGroup.team).toBe("acme")
      const offer = yield* resources.createOffer("acme", {
        id: "staff-deal" as never,
        name: "Staff",
        status: "draft",
        targetGroups: ["staff" as never, "uk" as never]
      })
      expect(offer.snapshot.engine.offers.has("staff-deal")).toBe(true)
      expect((yield* resources.setOfferStatus("acme", "staff-deal", "active")).resource.status).toBe("active")
      const stored = yield* (yield* ResourceStore).read("offer", "staff-deal")
      expect(stored?.text).toMatch(/^status: active$/m)
    }).pipe(Effect.provide(layer))
  })

  it.effect(
    "refuses what the loader would refuse, with reasons: team, visibility, ids, config-defined, lifecycle",
    () => {
      const { layer } = setup()
      return Effect.gen(function* () {
        const resources = yield* Resources
        yield* resources.createTargetGroup("globex", group("globex-staff"))
        expect(
          yield* reasonOf(resources.createTargetGroup("acme", { ...(group("x") as object), team: "globex" } as never))
        ).toMatchObject({
          _tag: "InvalidResource",
          errors: [{ field: "/team", code: "WRONG_TEAM" }]
        })
        expect(
          yield* reasonOf(
            resources.createOffer("acme", {
              id: "o" as never,
              name: "O",
              status: "draft",
              targetGroups: ["globex-staff" as never]
            })
          )
        ).toMatchObject({
          _tag: "InvalidResource",
          errors: [{ field: "/targetGroups/0", code: "UNKNOWN_TARGET_GROUP" }]
        })
        expect(yield* reasonOf(resources.createTargetGroup("acme", group("uk")))).toMatchObject({
          _tag: "ResourceConflict"
        })
        expect(yield* reasonOf(resources.createTargetGroup("acme", group("globex-staff")))).toMatchObject({
          _tag: "ResourceConflict"
        })
        expect(yield* reasonOf(resources.setOfferStatus("acme", "spring", "paused"))).toMatchObject({
          _tag: "ResourceConflict",
          detail: expect.stringContaining("offers/spring.yaml")
        })
        expect(yield* reasonOf(resources.setOfferStatus("globex", "spring", "paused"))).toMatchObject({
          _tag: "ResourceNotFound"
        })
        yield* resources.createOffer("acme", {
          id: "gone" as never,
          name: "G",
          status: "active",
          targetGroups: ["uk" as never]
        })
        yield* resources.setOfferStatus("acme", "gone", "archived")
        expect(yield* reasonOf(resources.setOfferStatus("acme", "gone", "active"))).toMatchObject({
          _tag: "ResourceConflict"
        })
      }).pipe(Effect.provide(layer))
    }
  )

  it.effect("changes by merge patch and deletes, against the version read; a group in use stays", () => {
    const { layer } = setup()
    return Effect.gen(function* () {
      const resources = yield* Resources
      const snapshots = yield* Snapshot
      const store = yield* ResourceStore
      const created = yield* resources.createTargetGroup("acme", group("staff"))
      const read = versionOf("targetGroup", created.resource)
      const changed = yield* resources.updateTargetGroup(
        "acme",
        "staff",
        { criteria: { email: { rejectFreeMail: true } } },
        [read]
      )
      expect(changed.resource.criteria).toMatchObject({
        domains: { allow: ["staff.example"] },
        email: { rejectFreeMail: true }
      })
      expect(snapshots.current().engine.targetGroups.get("staff")?.targetGroup.criteria.email.rejectFreeMail).toBe(true)
      // The version read before the change is stale now; nothing is written.
      expect(yield* reasonOf(resources.updateTargetGroup("acme", "staff", { name: "Lost" }, [read]))).toMatchObject({
        _tag: "StaleVersion",
        current: versionOf("targetGroup", changed.resource)
      })
      expect(yield* reasonOf(resources.deleteTargetGroup("acme", "staff", [read]))).toMatchObject({
        _tag: "StaleVersion"
      })
      yield* resources.createOffer("acme", {
        id: "staff-deal" as never,
        name: "Staff",
        status: "active",
        targetGroups: ["staff" as never]
      })
      expect(yield* reasonOf(resources.deleteTargetGroup("acme", "staff"))).toMatchObject({
        _tag: "ResourceConflict",
        detail: expect.stringContaining('"staff-deal"')
      })
      expect((yield* resources.updateOffer("acme", "staff-deal", { status: "paused" })).resource.status).toBe("paused")
      yield* resources.deleteOffer("acme", "staff-deal")
      yield* resources.deleteTargetGroup("acme", "staff", "*")
      expect(yield* store.read("targetGroup", "staff")).toBeUndefined()
      expect(snapshots.current().engine.targetGroups.has("staff")).toBe(false)
      expect(snapshots.current().engine.offers.has("staff-deal")).toBe(false)
      // Config-defined resources change in git.
      expect(yield* reasonOf(resources.deleteTargetGroup("acme", "uk"))).toMatchObject({ _tag: "ResourceConflict" })
      expect(yield* reasonOf(resources.updateOffer("acme", "spring", { name: "x" }))).toMatchObject({
        _tag: "ResourceConflict",
        detail: expect.stringContaining("git")
      })
    }).pipe(Effect.provide(layer))
  })

  it.effect("rolls a change back when the reload rejects the result, leaving store and snapshot as they were", () => {
    const { layer, dirs } = setup()
    return Effect.gen(function* () {
      const resources = yield* Resources
      const snapshots = yield* Snapshot
      const store = yield* ResourceStore
      // Another file breaks after the snapshot loaded, and the reload the watcher makes of it fails:
      // the snapshot is stale, so a change reloads in full, and fails as that reload does.
      writeFileSync(join(dirs.configDir, "target-groups/broken.yaml"), "id: broken\nname: 3\n")
      expect((yield* snapshots.reload()).ok).toBe(false)
      expect(yield* reasonOf(resources.createTargetGroup("acme", group("staff")))).toMatchObject({
        _tag: "ChangeNotApplied",
        problems: expect.arrayContaining([expect.stringContaining("broken.yaml")])
      })
      expect(yield* store.read("targetGroup", "staff")).toBeUndefined()
      expect(snapshots.current().engine.targetGroups.has("staff")).toBe(false)
      expect(snapshots.current().generation).toBe(1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("applies a change of one resource alone, without loading the configuration again", () => {
    const { layer, dirs } = setup()
    return Effect.gen(function* () {
      const resources = yield* Resources
      const snapshots = yield* Snapshot
      // A file changed in the config directory that no reload has read: a change of one item does not read it.
      writeFileSync(join(dirs.configDir, "target-groups/unread.yaml"), "id: unread\nname: Unread\n")
      yield* resources.createTargetGroup("acme", group("staff"))
      yield* resources.updateTargetGroup("acme", "staff", { name: "Staff 2" })
      yield* resources.createOffer("acme", {
        id: "staff-deal" as never,
        name: "Deal",
        status: "active",
        targetGroups: ["staff" as never]
      })
      yield* resources.deleteOffer("acme", "staff-deal")
      const { generation, engine } = snapshots.current()
      expect(generation).toBe(5)
      expect(snapshots.status().reloads).toEqual({ applied: 4, rejected: 0, incremental: 4 })
      expect(engine.targetGroups.get("staff")?.targetGroup.name).toBe("Staff 2")
      expect(engine.offers.has("staff-deal")).toBe(false)
      expect(engine.targetGroups.has("unread")).toBe(false)
    }).pipe(Effect.provide(layer))
  })

  it.effect("refuses a team's resource beyond limits.resourcesPerTeam, counting only API-created ones", () => {
    const { layer } = setup({
      ...validConfig,
      "campusgate.yaml": `${settingsYaml}limits:\n  resourcesPerTeam: 2\n`
    })
    return Effect.gen(function* () {
      const resources = yield* Resources
      yield* resources.createTargetGroup("acme", group("first"))
      yield* resources.createOffer("acme", {
        id: "first-deal" as never,
        name: "First",
        status: "active",
        targetGroups: ["first" as never]
      })
      const refused = yield* reasonOf(resources.createTargetGroup("acme", group("third")))
      expect(refused).toMatchObject({
        _tag: "ResourceConflict",
        detail: expect.stringMatching(/already has 2 .*limits\.resourcesPerTeam allows \(2\)/)
      })
      // Another team has room of its own.
      yield* resources.createTargetGroup("globex", group("globex-first"))
    }).pipe(Effect.provide(layer))
  })
})
