import { describe, expect, it } from "vitest"
import { inferInstitutionType, suffixRuleType } from "../../../src/engine/institutions/inferType.ts"

describe("inferInstitutionType", () => {
  it.each([
    ["Massachusetts Institute of Technology", "university"],
    ["Universidad Nacional de Colombia", "university"],
    ["Technische Universität München", "university"],
    ["東京大学", "university"],
    ["Hochschule für Musik und Theater München", "college"],
    ["Högskolan i Borås", "college"],
    ["Moraine Valley Community College", "college"],
    ["Friedenauer Gemeinschaftsschule", "school"],
    ["Liceum Ogólnokształcące im. Stanisława Wyspiańskiego", "school"],
    ["Springfield High School", "school"],
    ["Vysoká škola ekonomická v Praze", "university"],
    ["Gati Shakti Vishwavidyalaya", "university"],
    ["Max Planck Institute for Informatics", "research"],
    ["Acme Learning", "other"]
  ] as const)("%s is a %s", (name, type) => {
    expect(inferInstitutionType(name)).toBe(type)
  })

  it("falls back to school registry zones when the name says nothing", () => {
    expect(inferInstitutionType("Bintang Mulia", ["bintangmulia.sch.id"])).toBe("school")
    expect(inferInstitutionType(null, ["x.k12.ca.us"])).toBe("school")
    expect(inferInstitutionType(null, ["x.edu"])).toBe("other")
    expect(suffixRuleType("k12.ca.us")).toBe("school")
    expect(suffixRuleType("edu.cn")).toBe("other")
  })
})
