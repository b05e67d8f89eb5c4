/**
 * A change of one item (`LiveSnapshot.change`, `follow`): applied alone, it
 * gives the configuration a full load of the same stores gives; one the
 * loader would refuse is refused with the loader's own problems, as a full
 * reload refused it before; one already served changes nothing; and a feed
 * with a gap is one full reload.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Keys } from "../../src/app/Keys.ts"
import { type ConfigFeed, LiveSnapshot, type ReloadOutcome } from "../../src/app/Snapshot.ts"
import { directorySource } from "../../src/app/sources.ts"
import type { ItemRef } from "../../src/config/itemChanges.ts"
import type { LoadedConfig } from "../../src/config/loadConfig.ts"
import { InvalidConfiguration } from "../../src/domain/errors.ts"
import type { TeamId } from "../../src/domain/Identifiers.ts"
import { ApiKeyStore } from "../../src/keys/ApiKeyStore.ts"
import { ResourceStore } from "../../src/resources/ResourceStore.ts"
import { makeDirs, validConfig } from "../config/configFiles.ts"

const groupYaml = (id: string, extra = "team: acme\n") =>
  `id: ${id}\nname: ${id}\n${extra}criteria:\n  domains:\n    allow: [${id}.samples.edu]\n`

/** A snapshot over a config directory and the file stores of its data directory. */
const setup = (feed?: ConfigFeed) => {
  const dirs = makeDirs(validConfig)
  const location = { ...dirs, env: {} }
  const source = directorySource(location)
  const outcomes: Array<ReloadOutcome> = []
  const live = LiveSnapshot.loadSync(source, { onReload: (outcome) => outcomes.push(outcome), feed })
  if (live instanceof InvalidConfiguration) throw live
  const resources = ResourceStore.makeFiles(dirs.dataDir)
  const keys = Keys.make(ApiKeyStore.makeFiles(dirs))
  /** What a full load of the same stores gives now. */
  const fullLoad = () => Effect.runSync(source.load)
  const run = <A>(effect: Effect.Effect<A, unknown>) => Effect.runPromise(effect)
  return { live, outcomes, resources, keys, fullLoad, run }
}

/** The items of a configuration, comparable whatever their order. */
const itemsOf = (config: LoadedConfig) => {
  const byId = <A extends { readonly id: string }>(items: ReadonlyArray<A>) =>
    [...items].sort((a, b) => (a.id < b.id ? -1 : 1))
  return { targetGroups: byId(config.targetGroups), offers: byId(config.offers), apiKeys: byId(config.apiKeys) }
}

describe("LiveSnapshot.change", () => {
  it("applies each item alone, giving what a full load gives, with no full reload", async () => {
    const { live, outcomes, resources, keys, fullLoad, run } = setup()
    const changeAndCompare = async (item: ItemRef) => {
      const outcome = await run(live.change([item]))
      expect(outcome).toMatchObject({ ok: true, change: "incremental", items: [item] })
      const full = fullLoad()
      if (!full.ok) throw new Error("the stores hold a valid configuration")
      expect(itemsOf(live.current().config)).toEqual(itemsOf(full.config))
      expect([...live.current().engine.targetGroups.keys()].sort()).toEqual(
        full.config.targetGroups.map((group) => group.id).sort()
      )
      expect([...live.current().engine.offers.keys()].sort()).toEqual(
        full.config.offers.map((offer) => offer.id).sort()
      )
    }
    await run(resources.write("targetGroup", "staff", groupYaml("staff")))
    await changeAndCompare({ kind: "targetGroup", id: "staff" })
    await run(
      resources.write("offer", "deal", "id: deal\nteam: acme\nname: Deal\nstatus: active\ntargetGroups: [staff, uk]\n")
    )
    await changeAndCompare({ kind: "offer", id: "deal" })
    expect(live.current().engine.validateOffer("ann@staff.samples.edu", "deal").isValid).toBe(true)
    await run(resources.write("targetGroup", "staff", groupYaml("staff").replace("name: staff", "name: Staff 2")))
    await changeAndCompare({ kind: "targetGroup", id: "staff" })
    const made = await run(keys.create({ team: "acme" as TeamId, scopes: ["validate:offers"] }, false))
    await changeAndCompare({ kind: "apiKey", id: made.id })
    expect(live.current().keys.verify(made.key, Date.now())).toMatchObject({ ok: true })
    await run(keys.revoke(made.id))
    await changeAndCompare({ kind: "apiKey", id: made.id })
    expect(live.current().keys.verify(made.key, Date.now())).toMatchObject({ ok: false })
    await run(resources.remove("offer", "deal"))
    await changeAndCompare({ kind: "offer", id: "deal" })
    await run(resources.remove("targetGroup", "staff"))
    await changeAndCompare({ kind: "targetGroup", id: "staff" })
    expect(live.status().reloads).toEqual({ applied: 7, rejected: 0, incremental: 7 })
    expect(live.current().generation).toBe(8)
    expect(outcomes.every((outcome) => outcome.ok && outcome.change === "incremental")).toBe(true)
  })

  it("changes nothing for an item already served as stored", async () => {
    const { live, outcomes, resources, run } = setup()
    await run(resources.write("targetGroup", "staff", groupYaml("staff")))
    await run(live.change([{ kind: "targetGroup", id: "staff" }]))
    const again = await run(live.change([{ kind: "targetGroup", id: "staff" }]))
    expect(again).toMatchObject({ ok: true, generation: 2 })
    expect(live.current().generation).toBe(2)
    expect(outcomes).toHaveLength(1)
  })

  const refusals: ReadonlyArray<{
    readonly name: string
    readonly write: (stores: ReturnType<typeof setup>) => Promise<unknown>
    readonly item: ItemRef
  }> = [
    {
      name: "a target group of an undeclared team",
      write: ({ resources, run }) => run(resources.write("targetGroup", "bad", groupYaml("bad", "team: nobody\n"))),
      item: { kind: "targetGroup", id: "bad" }
    },
    {
      name: "a target group that does not decode",
      write: ({ resources, run }) => run(resources.write("targetGroup", "bad", "id: bad\nname: 3\n")),
      item: { kind: "targetGroup", id: "bad" }
    },
    {
      name: "an offer naming a target group that does not exist",
      write: ({ resources, run }) =>
        run(
          resources.write("offer", "bad", "id: bad\nteam: acme\nname: Bad\nstatus: active\ntargetGroups: [nowhere]\n")
        ),
      item: { kind: "offer", id: "bad" }
    },
    {
      name: "a target group deleted while an offer uses it",
      write: async ({ live, resources, run }) => {
        await run(resources.write("targetGroup", "staff", groupYaml("staff")))
        await run(live.change([{ kind: "targetGroup", id: "staff" }]))
        await run(
          resources.write("offer", "deal", "id: deal\nteam: acme\nname: Deal\nstatus: active\ntargetGroups: [staff]\n")
        )
        await run(live.change([{ kind: "offer", id: "deal" }]))
        await run(resources.remove("targetGroup", "staff"))
      },
      item: { kind: "targetGroup", id: "staff" }
    }
  ]

  for (const refusal of refusals) {
    it(`refuses ${refusal.name} with the problems a full reload gives`, async () => {
      const stores = setup()
      const { live, fullLoad, run } = stores
      await refusal.write(stores)
      const generation = live.current().generation
      const full = fullLoad()
      expect(full.ok).toBe(false)
      const outcome = await run(live.change([refusal.item]))
      expect(outcome).toEqual({ ok: false, problems: full.ok ? [] : full.problems })
      expect(live.current().generation).toBe(generation)
      expect(live.status().stale).toBe(true)
    })
  }
})

describe("LiveSnapshot.follow", () => {
  /** A feed over a list of items, the version being its length; `gap` drops what it holds. */
  const memoryFeed = () => {
    let log: Array<ItemRef | undefined> = []
    const feed: ConfigFeed = {
      version: Effect.sync(() => String(log.length)),
      changesSince: (since) =>
        Effect.sync(() => {
          const after = log.slice(Number(since))
          return {
            version: String(log.length),
            items: after.every((item) => item !== undefined) ? (after as Array<ItemRef>) : undefined
          }
        })
    }
    return {
      feed,
      push: (item: ItemRef | undefined) => log.push(item),
      clear: () => {
        log = log.map(() => undefined)
      }
    }
  }

  it("applies the items the feed names since the version held, and reloads in full after a gap", async () => {
    const { feed, push, clear } = memoryFeed()
    const { live, outcomes, resources, run } = setup(feed)
    await run(resources.write("targetGroup", "one", groupYaml("one")))
    push({ kind: "targetGroup", id: "one" })
    await run(resources.write("targetGroup", "two", groupYaml("two")))
    push({ kind: "targetGroup", id: "two" })
    await run(live.follow())
    expect(outcomes).toEqual([
      expect.objectContaining({
        ok: true,
        change: "incremental",
        items: [
          { kind: "targetGroup", id: "one" },
          { kind: "targetGroup", id: "two" }
        ]
      })
    ])
    // Nothing new: nothing done.
    await run(live.follow())
    expect(outcomes).toHaveLength(1)
    // A change the feed no longer holds (trimmed, or no one item): one full reload, which reads it.
    await run(resources.write("targetGroup", "three", groupYaml("three")))
    push(undefined)
    clear()
    await run(live.follow())
    expect(outcomes[1]).toMatchObject({ ok: true, change: "reload" })
    expect(live.current().engine.targetGroups.has("three")).toBe(true)
    await run(live.follow())
    expect(outcomes).toHaveLength(2)
  })
})
