import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { LiveSnapshot, Snapshot } from "../../src/app/Snapshot.ts"
import { resourcesSource } from "../../src/app/sources.ts"
import { type Validated, Validation, ValidationCounters } from "../../src/app/Validation.ts"
import { configFromResources } from "../../src/config/resourcesConfig.ts"
import { InvalidConfiguration, OfferNotFound } from "../../src/domain/errors.ts"
import { ALL_TEAMS } from "../../src/domain/visibility.ts"
import { UsageStatistics } from "../../src/stats/UsageStatistics.ts"

const resources = {
  targetGroups: [
    { id: "uk", name: "UK students", criteria: { institutions: { countries: ["GB"] } } },
    { id: "acme-only", team: "acme", name: "Acme's", criteria: { domains: { allow: ["acme.samples"] } } },
    { id: "globex-only", team: "globex", name: "Globex's", criteria: { domains: { allow: ["globex.samples"] } } }
  ],
  offers: [
    { id: "acme-spring", team: "acme", name: "Spring", status: "active", targetGroups: ["uk", "acme-only"] },
    { id: "globex-fall", team: "globex", name: "Fall", status: "active", targetGroups: ["globex-only"] }
  ]
}

/** Validation over the resources above, with the counts it reports collected. */
const setup = () => {
  const counted: Array<Validated> = []
  const counters = ValidationCounters.of({
    validated: (result) => counted.push(result),
    validatedAll: (results) => {
      for (const result of results) if ("isValid" in result) counted.push(result)
    }
  })
  const live = LiveSnapshot.loadSync(resourcesSource(resources))
  if (live instanceof InvalidConfiguration) throw live
  const layer = Validation.layer.pipe(
    Layer.provideMerge(
      Layer.mergeAll(Snapshot.layer(live), UsageStatistics.layerMemory(), Layer.succeed(ValidationCounters, counters))
    )
  )
  return { layer, counted }
}

describe("Validation", () => {
  it.effect("applies the team rule: own and shared target groups, own offers; anything else is not found", () => {
    const { layer } = setup()
    return Effect.gen(function* () {
      const validation = yield* Validation
      expect(validation.targetGroup("acme", "jane@ox.ac.uk", "uk")).toMatchObject({ isValid: true })
      expect(validation.targetGroup("acme", "jo@acme.samples", "acme-only")).toMatchObject({ isValid: true })
      const notFound = (tag: string) =>
        expect.objectContaining({ _tag: "ValidationError", reason: expect.objectContaining({ _tag: tag }) })
      expect(validation.targetGroup("acme", "jo@globex.samples", "globex-only")).toEqual(
        notFound("TargetGroupNotFound")
      )
      expect(validation.targetGroup("acme", "jo@x.samples", "no-such")).toEqual(notFound("TargetGroupNotFound"))
      expect(validation.offer("acme", "jane@ox.ac.uk", "acme-spring")).toMatchObject({ isValid: true })
      expect(validation.offer("acme", "jane@ox.ac.uk", "globex-fall")).toEqual(notFound("OfferNotFound"))
      expect(validation.manyOffer("globex", ["jane@ox.ac.uk"], "acme-spring")).toEqual(notFound("OfferNotFound"))
      expect(validation.manyTargetGroup("globex", ["jo@acme.samples"], "acme-only")).toEqual(
        notFound("TargetGroupNotFound")
      )
      // The library and the CLI see every team.
      expect(validation.offer(ALL_TEAMS, "jo@globex.samples", "globex-fall")).toMatchObject({ isValid: true })
      expect(() => validation.rows("acme", { offerId: "globex-fall" }, ["a@b.samples"])).toThrow(OfferNotFound)
    }).pipe(Effect.provide(layer))
  })

  it.effect("records every offer validation in usage, however it arrives, and counts every result once", () => {
    const { layer, counted } = setup()
    return Effect.gen(function* () {
      const validation = yield* Validation
      const usage = yield* UsageStatistics
      validation.offer("acme", "jane@ox.ac.uk", "acme-spring")
      validation.manyOffer("acme", ["bob@mit.edu", "jo@acme.samples"], "acme-spring")
      validation.batch("acme", [
        { offerId: "acme-spring", email: "ann@cam.ac.uk" },
        { offerId: "globex-fall", email: "ann@cam.ac.uk" }
      ])
      validation.rows("acme", { offerId: "acme-spring" }, ["not an email"])
      validation.targetGroup("acme", "jane@ox.ac.uk", "uk")
      expect(yield* usage.usage("acme-spring")).toMatchObject({
        validations: 5,
        eligible: 3,
        ineligible: 2,
        ineligibleByReason: { NO_TARGET_GROUP_MATCHED: 1, INVALID_EMAIL_FORMAT: 1 }
      })
      expect((yield* usage.usage("globex-fall")).validations).toBe(0)
      // Five offer validations and one target-group validation; the hidden batch item validated nothing.
      expect(counted).toHaveLength(6)
    }).pipe(Effect.provide(layer))
  })

  it.effect("answers from the snapshot in force after a reload", () => {
    const live = LiveSnapshot.loadSync(resourcesSource(resources))
    if (live instanceof InvalidConfiguration) throw live
    const layer = Validation.layer.pipe(
      Layer.provide(Layer.mergeAll(Snapshot.layer(live), UsageStatistics.layerMemory(), ValidationCounters.none))
    )
    return Effect.gen(function* () {
      const validation = yield* Validation
      expect(validation.targetGroup("acme", "jane@tum.de", "uk")).toMatchObject({ isValid: false })
      const widened = structuredClone(resources)
      widened.targetGroups[0]!.criteria.institutions = { countries: ["GB", "DE"] }
      expect(live.apply(configFromResources(widened))).toMatchObject({ ok: true, generation: 2 })
      expect(validation.targetGroup("acme", "jane@tum.de", "uk")).toMatchObject({ isValid: true })
    }).pipe(Effect.provide(layer))
  })
})
