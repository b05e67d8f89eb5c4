import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { InvalidConfiguration } from "../../src/domain/errors.ts"
import { openConfig } from "../../src/index.ts"

const shippedConfig = fileURLToPath(new URL("../../config", import.meta.url))

describe("openConfig", () => {
  it("serves the shipped example config through the library", () => {
    const cg = openConfig({ configDir: shippedConfig, dataDir: "/nonexistent/campusgate-data", env: {} })
    try {
      expect(cg.validateOffer("jane@ox.ac.uk", "acme-student-discount")).toMatchObject({ isValid: true })
      expect(cg.validateOffer("jane@gmail.com", "acme-student-discount").isValid).toBe(false)
      expect(cg.status()).toMatchObject({ generation: 1, stale: false, problems: [] })
      expect(cg.current().config.teams.has("globex")).toBe(true)
    } finally {
      cg.close()
    }
  })

  it("throws InvalidConfiguration with positions for a directory that does not load", () => {
    expect(() => openConfig({ configDir: "/nonexistent/campusgate-config", env: {} })).toThrow(InvalidConfiguration)
  })
})
