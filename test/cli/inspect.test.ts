import { execFileSync, spawnSync } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const main = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url))
const run = (args: Array<string>, input?: string) =>
  execFileSync(process.execPath, [main, ...args], { input, encoding: "utf8" })
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line))

describe("campusgate inspect", () => {
  it("prints one JSON object per input line, in order, with the stable field names", () => {
    const lines = run(["inspect"], "jane@mit.edu\n\nox.ac.uk\r\nnot an email@\nalumni.mit.edu\n")
    expect(lines.map((l) => l.input)).toEqual(["jane@mit.edu", "ox.ac.uk", "not an email@", "alumni.mit.edu"])
    expect(Object.keys(lines[0])).toEqual([
      "input",
      "format",
      "domain",
      "institution",
      "organization",
      "flags",
      "candidate"
    ])
    expect(lines[0].candidate).toBeNull()
    expect(lines[0]).toMatchObject({
      format: { valid: true, code: null },
      domain: "mit.edu",
      institution: {
        name: "Massachusetts Institute of Technology",
        country: "US",
        matchedDomain: "mit.edu",
        rule: "listed-domain"
      }
    })
    expect(lines[0].institution.sources.map((s: { dataset: string }) => s.dataset)).toEqual(
      expect.arrayContaining(["swot", "ror"])
    )
    expect(lines[0].institution).toMatchObject({
      type: "university",
      role: "mixed",
      evidence: { name: { source: "swot" }, type: { source: "ror" }, country: { confidence: "high" } }
    })
    expect(lines[1].institution).toMatchObject({ country: "GB", type: "university" })
    expect(lines[2]).toMatchObject({ format: { valid: false, code: expect.any(String) }, institution: null })
    expect(lines[3]).toMatchObject({ institution: null, flags: { denied: "alumni-subdomain" } })
    const [unknown] = run(["inspect", "musikhochschule-sampleburg.de"])
    expect(unknown).toMatchObject({
      institution: null,
      candidate: { domain: "musikhochschule-sampleburg.de", score: expect.any(Number) }
    })
    expect(unknown.candidate.signals.length).toBeGreaterThan(0)
  })

  it("searches institutions with --search, one JSON object per line, best first", () => {
    const lines = run(["inspect", "--search", "univ oxf", "--country", "gb", "--limit", "2"])
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatchObject({ name: "University of Oxford", country: "GB", type: "university" })
    expect(lines[0].domains).toContain("ox.ac.uk")
    for (const line of lines) expect(line.country).toBe("GB")
  })

  it("takes inputs as arguments and flags policy facts", () => {
    const [disposable, typo, homograph] = run(["inspect", "x@mailinator.com", "mit.ed", "mіt.edu"])
    expect(disposable.flags).toMatchObject({ disposable: true, freeMail: true })
    expect(typo).toMatchObject({ institution: null, flags: { suggestion: "mit.edu" } })
    expect(homograph).toMatchObject({ institution: null, flags: { confusable: true, imitates: "mit.edu" } })
  })

  it("merges a user dataset given with --dataset", () => {
    const dir = mkdtempSync(join(tmpdir(), "campusgate-"))
    const csv = join(dir, "extra.csv")
    writeFileSync(csv, "domain,name,country,type\nnew-academy.org,New Academy,NZ,college\n")
    const [line] = run(["inspect", "--dataset", csv, "new-academy.org"])
    expect(line.institution).toMatchObject({ name: "New Academy", country: "NZ", sources: [{ dataset: csv }] })
  })

  it("exits non-zero with a message on a bad dataset or an unknown command", () => {
    const dir = mkdtempSync(join(tmpdir(), "campusgate-"))
    const csv = join(dir, "bad.csv")
    writeFileSync(csv, "domain,name,country\nx.edu,X,UK\n")
    const bad = spawnSync(process.execPath, [main, "inspect", "--dataset", csv, "x.edu"], { encoding: "utf8" })
    expect(bad.status).not.toBe(0)
    expect(bad.stderr).toContain("bad.csv:2 country")
    const unknown = spawnSync(process.execPath, [main, "nope"], { encoding: "utf8" })
    expect(unknown.status).not.toBe(0)
  })
})

describe("campusgate inspect with a config directory", () => {
  it("merges the datasets the config names, as the daemon does", () => {
    const dir = mkdtempSync(join(tmpdir(), "campusgate-inspect-config-"))
    writeFileSync(join(dir, "campusgate.yaml"), "datasets:\n  - partners.csv\n")
    writeFileSync(join(dir, "partners.csv"), "domain,name,country\npartnercollege.co.nz,Partner College,NZ\n")
    // Its own data directory: ./data may hold a daemon's keys for the example config's teams.
    const [partner] = run(["inspect", "--config", dir, "--data", join(dir, "data"), "jane@partnercollege.co.nz"])
    expect(partner.institution).toMatchObject({ name: "Partner College", country: "NZ", rule: "listed-domain" })
  })

  it("refuses a config directory that does not load", () => {
    const result = spawnSync(process.execPath, [main, "inspect", "--config", "/nonexistent/config", "mit.edu"], {
      encoding: "utf8"
    })
    expect(result.status).not.toBe(0)
    expect(result.stderr + result.stdout).toMatch(/the config directory does not exist/)
  })
})
