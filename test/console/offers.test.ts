/** The Offers list's filter and search, the status buttons an offer gets, and its window in words. */
import { describe, expect, it } from "vitest"
import type { Offer } from "../../console/src/apiTypes.ts"
import { filterOffers, offerActions, windowText } from "../../console/src/data/offers.ts"

const offer = (id: string, fields: Partial<Offer> = {}): Offer => ({
  id,
  team: "acme",
  name: id,
  targetGroups: ["uk-students"],
  status: "active",
  effectiveStatus: "active",
  source: "api",
  ...fields
})

describe("the offer list", () => {
  const offers = [
    offer("spring-sale", { name: "Spring sale for Université students" }),
    offer("winter", { name: "Winter semester", status: "paused", effectiveStatus: "paused" }),
    offer("launch", { description: "UK launch", startsAt: "2030-01-01T00:00:00Z", effectiveStatus: "scheduled" })
  ]

  it("keeps the offers of one effective status", () => {
    expect(filterOffers(offers, { status: "paused", query: "" }).map((o) => o.id)).toEqual(["winter"])
    expect(filterOffers(offers, { status: "scheduled", query: "" }).map((o) => o.id)).toEqual(["launch"])
    expect(filterOffers(offers, { status: "all", query: "" })).toHaveLength(3)
  })

  it("searches id, name and description, every word, ignoring case and accents", () => {
    expect(filterOffers(offers, { status: "all", query: "universite SPRING" }).map((o) => o.id)).toEqual([
      "spring-sale"
    ])
    expect(filterOffers(offers, { status: "all", query: "uk" }).map((o) => o.id)).toEqual(["launch"])
    expect(filterOffers(offers, { status: "all", query: "spring winter" })).toEqual([])
  })
})

describe("an offer's status buttons", () => {
  it("follow the moves the API allows, for offers made through the API only", () => {
    const labels = (fields: Partial<Offer>) => offerActions(offer("x", fields)).map((a) => `${a.label}:${a.status}`)
    expect(labels({ status: "active" })).toEqual(["Pause:paused", "Archive:archived"])
    expect(labels({ status: "paused" })).toEqual(["Resume:active", "Archive:archived"])
    expect(labels({ status: "draft" })).toEqual(["Publish:active", "Archive:archived"])
    expect(labels({ status: "archived" })).toEqual([])
    expect(labels({ status: "active", source: "config" })).toEqual([])
  })
})

describe("an offer's window", () => {
  it("says from and until", () => {
    const same = (iso: string) => iso.slice(0, 10)
    expect(windowText({ startsAt: "2026-03-01T00:00:00Z", endsAt: "2026-06-01T00:00:00Z" }, same)).toBe(
      "2026-03-01 – 2026-06-01"
    )
    expect(windowText({ startsAt: "2026-03-01T00:00:00Z" }, same)).toBe("from 2026-03-01")
    expect(windowText({ endsAt: "2026-06-01T00:00:00Z" }, same)).toBe("until 2026-06-01")
    expect(windowText({}, same)).toBe("no window")
  })
})
