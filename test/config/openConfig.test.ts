import { mkdirSync, readdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { InvalidConfiguration } from "../../src/domain/errors.ts"
import { createCampusgate, openConfig } from "../../src/index.ts"
import { makeDirs, validConfig } from "./configFiles.ts"

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
      void cg.close()
    }
  })

  it("counts offer validations in usage statistics and keeps them in the data directory across a restart", async () => {
    const dirs = makeDirs(validConfig)
    mkdirSync(dirs.dataDir, { recursive: true })
    const open = () => openConfig({ configDir: dirs.configDir, dataDir: dirs.dataDir, env: {} })
    const first = open()
    first.validateOffer("jane@ox.ac.uk", "spring")
    first.validateManyOffer(["Jane+x@ox.ac.uk", "bob@mit.edu", "not an email"], "spring")
    first.validate("jane@ox.ac.uk", "uk")
    expect(await first.usage("spring")).toMatchObject({ validations: 4, eligible: 2, uniqueEmails: { estimate: 2 } })
    await first.close()
    expect(readdirSync(join(dirs.dataDir, "stats")).sort()).toEqual(["hash-key", "spring.json"])

    const second = open()
    second.validateOffer("JANE@ox.ac.uk", "spring")
    expect(await second.usage("spring")).toMatchObject({
      validations: 5,
      eligible: 3,
      ineligible: 2,
      ineligibleByReason: { COUNTRY_NOT_ALLOWED: 1, INVALID_EMAIL_FORMAT: 1 },
      matchesByTargetGroup: { uk: 3 },
      uniqueEmails: { estimate: 2 }
    })
    expect((await second.usage("no-such-offer")).validations).toBe(0)
    await second.close()
  })

  it("throws InvalidConfiguration with positions for a directory that does not load", () => {
    expect(() => openConfig({ configDir: "/nonexistent/campusgate-config", env: {} })).toThrow(InvalidConfiguration)
  })
})

describe("createCampusgate over a config directory", () => {
  it("serves the same files as openConfig, with the same methods as for resources in memory", async () => {
    const cg = await createCampusgate({ configDir: shippedConfig, dataDir: "/nonexistent/campusgate-data", env: {} })
    try {
      expect(cg.validateOffer("jane@ox.ac.uk", "acme-student-discount")).toMatchObject({ isValid: true })
      expect(cg.validateMany(["jane@ox.ac.uk", "bob@gmail.com"], { offerId: "acme-student-discount" })).toMatchObject([
        { isValid: true },
        { isValid: false }
      ])
      expect(cg.status()).toMatchObject({ generation: 1, stale: false })
      expect((await cg.usage("acme-student-discount")).validations).toBe(3)
      await cg.reload()
      expect(cg.status().generation).toBe(2)
    } finally {
      await cg.close()
    }
  })

  it("rejects with InvalidConfiguration for a directory that does not load, and on a reload that does not", async () => {
    await expect(createCampusgate({ configDir: "/nonexistent/campusgate-config", env: {} })).rejects.toBeInstanceOf(
      InvalidConfiguration
    )
    const dirs = makeDirs(validConfig)
    const cg = await createCampusgate({ ...dirs, env: {} })
    writeFileSync(join(dirs.configDir, "offers/spring.yaml"), "id: spring\n")
    await expect(cg.reload()).rejects.toBeInstanceOf(InvalidConfiguration)
    expect(cg.validateOffer("jane@ox.ac.uk", "spring").isValid).toBe(true)
    await cg.close()
  })
})
