import { describe, expect, it } from "vitest"
import { apiEndpoints } from "../../src/api/Api.ts"
import { generateApiKey } from "../../src/keys/apiKeys.ts"
import { OTHER_ROUTES, ROUTE_TEMPLATES, routeTemplate, UNMATCHED_ROUTE } from "../../src/server/routes.ts"

const { key } = generateApiKey()
const address = "jane.doe@ox.ac.uk"

/** The endpoint's path with each parameter filled in by `value`. */
const sentPath = (path: string, value: string) => path.replace(/:[A-Za-z]+/g, value)

describe("the route template of a request", () => {
  it("is each API endpoint's path with its parameters in braces, whatever was sent for them", () => {
    for (const endpoint of apiEndpoints) {
      const template = endpoint.path.replace(/:([A-Za-z]+)/g, "{$1}")
      for (const value of ["uk-students", key, address, encodeURIComponent(address)]) {
        expect(
          routeTemplate(endpoint.method, sentPath(endpoint.path, value)),
          `${endpoint.method} ${endpoint.path}`
        ).toBe(template)
      }
    }
    expect(routeTemplate("GET", `/api/v1/offers/${key}/status`)).toBe("/api/v1/offers/{id}/status")
    expect(routeTemplate("GET", "/api/v1/jobs/job_1/results?cursor=x")).toBe("/api/v1/jobs/{jobId}/results")
  })

  it("is the same for the /v1 alias, and ignores the query", () => {
    expect(routeTemplate("GET", `/v1/offers/${address}/status?key=${key}`)).toBe("/api/v1/offers/{id}/status")
    expect(routeTemplate("POST", "/v1/validate/target-group")).toBe("/api/v1/validate/target-group")
    expect(routeTemplate("GET", "/v1/offers")).toBe("/api/v1/offers")
  })

  it("is the fixed path of the routes beside the API", () => {
    for (const path of ["/healthz", "/livez", "/readyz", "/metrics", "/docs", "/openapi.json"]) {
      expect(routeTemplate("GET", path)).toBe(path)
    }
  })

  it("follows the method: a GET of a POST-only path under a parameter is the parameter's route", () => {
    expect(routeTemplate("POST", "/api/v1/offers/bulk-process")).toBe("/api/v1/offers/bulk-process")
    expect(routeTemplate("GET", "/api/v1/offers/bulk-process")).toBe("/api/v1/offers/{id}")
    // No route for the method at all (a 405): the path's template under any method.
    expect(routeTemplate("DELETE", "/api/v1/validate/bulk")).toBe("/api/v1/validate/bulk")
    expect(routeTemplate("PUT", `/api/v1/offers/${key}/status`)).toBe("/api/v1/offers/{id}/status")
  })

  it("is `unmatched` for a path no route matches, never the path", () => {
    for (const path of [
      `/nowhere/${address}`,
      `/${key}`,
      "/api/v1/offers/a/b/c",
      "/api/v2/offers",
      "/v1x/offers",
      "/docs/other.js"
    ]) {
      expect(routeTemplate("GET", path)).toBe(UNMATCHED_ROUTE)
    }
  })

  it("is always one of a fixed set", () => {
    expect(ROUTE_TEMPLATES.size).toBe(
      // The API's paths, the GET routes beside it, the console's session, and `unmatched`.
      new Set(apiEndpoints.map((endpoint) => endpoint.path)).size + OTHER_ROUTES.length + 2
    )
    for (const [method, path] of [
      ["GET", `/api/v1/offers/${address}`],
      ["GET", "/x"],
      ["GET", "/metrics"],
      ["GET", "/console/offers/acme-student-discount"],
      ["POST", "/console/session"],
      ["GET", "/v/ver_k3v9q2m7x4c8b1n6z5t0w2y4r8.c2VjcmV0"]
    ] as const) {
      expect(ROUTE_TEMPLATES.has(routeTemplate(method, path))).toBe(true)
    }
  })
})
