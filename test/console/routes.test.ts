/** The console's addresses (`data/routes.ts`): the screen a path names, and the path of a screen, both ways. */
import { describe, expect, it } from "vitest"
import { hrefOf, type Route, routeOf } from "../../console/src/data/routes.ts"

describe("the console's router", () => {
  it("reads each screen from its path, and writes the same path back", () => {
    const routes: ReadonlyArray<readonly [string, Route]> = [
      ["/console/offers", { screen: "offers" }],
      ["/console/offers/acme-spring-sale", { screen: "offer", id: "acme-spring-sale" }],
      ["/console/target-groups", { screen: "target-groups" }],
      ["/console/jobs", { screen: "jobs" }],
      ["/console/reviews", { screen: "reviews" }],
      ["/console/reviews/hfmt-hamburg.de/", { screen: "review", domain: "hfmt-hamburg.de" }],
      ["/console/status", { screen: "status" }]
    ]
    for (const [path, route] of routes) {
      expect(routeOf(path)).toEqual(route)
      expect(hrefOf(route)).toBe(path)
    }
  })

  it("ends a domain's path in a slash, so the daemon does not take its dots for a file's extension", () => {
    const href = hrefOf({ screen: "review", domain: "uni.ac.uk" })
    expect(href).toBe("/console/reviews/uni.ac.uk/")
    expect(href.slice(href.lastIndexOf("/") + 1)).not.toContain(".")
    expect(routeOf("/console/reviews/uni.ac.uk")).toEqual({ screen: "review", domain: "uni.ac.uk" })
  })

  it("opens the offers for an unknown path or the console's root", () => {
    expect(routeOf("/console")).toEqual({ screen: "offers" })
    expect(routeOf("/console/nothing-here")).toEqual({ screen: "offers" })
  })
})
