import { randomUUID } from "node:crypto"
import { subscribe, unsubscribe } from "node:diagnostics_channel"
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { importedIndexFile, importedTableFile, tableCacheDir } from "../../src/engine/data/builtInData.ts"
import {
  buildInstitutionTable,
  compileImportedTable,
  type IndexLoadReport,
  institutionIndexChannel,
  loadBuiltInInstitutions,
  loadBuiltInTable
} from "../../src/engine/InstitutionIndex.ts"
import { InstitutionTable } from "../../src/engine/institutions/InstitutionTable.ts"
import { encodeTable } from "../../src/engine/institutions/tableBuffer.ts"
import { fixtureBuilder } from "../fixtures.ts"

/** The table `options` build, with the form its load reported. */
const built = (options: Parameters<typeof buildInstitutionTable>[0]) => {
  const reports: Array<IndexLoadReport> = []
  const onLoad = (message: unknown) => reports.push(message as IndexLoadReport)
  subscribe(institutionIndexChannel, onLoad)
  try {
    const table = buildInstitutionTable(options)
    return { table, form: reports[0]?.form }
  } finally {
    unsubscribe(institutionIndexChannel, onLoad)
  }
}

const nameAt = (table: InstitutionTable, host: string) => {
  const match = table.lookup(host)
  return match.kind === "listed" ? match.entry.institution.name : match.kind
}

const dataset = (name: string) => ({
  name: "partners.csv",
  format: "csv" as const,
  content: `domain,name,country\nmit.edu,${name},US\nnew-partner.org,New Partner College,DE\n`
})

describe("the built-in index's binary form", () => {
  it("answers every domain as the JSON index it was built beside", () => {
    const binary = loadBuiltInTable()
    const data = loadBuiltInInstitutions()
    const fromJson = InstitutionTable.fromData(data)
    expect(binary.size).toBe(data.institutions.length)
    const hosts = [...fromJson.entries.keys()].filter((_, i) => i % 7 === 0).flatMap((d) => [d, `a.${d}`])
    for (const host of [...hosts, "kaist.edu", "thenewcollege.edu.in", "nowhere.example"]) {
      expect(binary.lookup(host)).toEqual(fromJson.lookup(host))
    }
    expect(binary.institutions.slice(0, 500)).toEqual(fromJson.institutions.slice(0, 500))
  })

  it("is read into shared memory, which a job thread reads without a copy of its own", () => {
    const table = loadBuiltInTable()
    expect(table.bytes.buffer).toBeInstanceOf(SharedArrayBuffer)
    expect(InstitutionTable.fromBuffer(table.bytes).lookup("cs.mit.edu")).toEqual(table.lookup("cs.mit.edu"))
  })

  it("refuses a buffer that is not a compiled table, or is cut short", () => {
    const bytes = encodeTable(fixtureBuilder().finish())
    expect(() => InstitutionTable.fromBuffer(bytes.subarray(0, bytes.length - 1))).toThrow(/truncated/)
    expect(() => InstitutionTable.fromBuffer(new TextEncoder().encode('{"format":"x"}'))).toThrow(/not a compiled/)
  })
})

describe("user datasets over the built-in index", () => {
  it("are merged once, then read from the cache until a dataset changes", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "campusgate-index-"))
    const first = built({ datasets: [dataset("MIT Renamed")], dataDir })
    expect(first.form).toBe("compiled")
    expect(nameAt(first.table, "cs.mit.edu")).toBe("MIT Renamed")
    expect(nameAt(first.table, "new-partner.org")).toBe("New Partner College")
    const again = built({ datasets: [dataset("MIT Renamed")], dataDir })
    expect(again.form).toBe("cached")
    // Compiled or read back, in shared memory for the job threads.
    expect(first.table.bytes.buffer).toBeInstanceOf(SharedArrayBuffer)
    expect(again.table.bytes.buffer).toBeInstanceOf(SharedArrayBuffer)
    expect(again.table.lookup("cs.mit.edu")).toEqual(first.table.lookup("cs.mit.edu"))
    expect(again.table.institutions).toEqual(first.table.institutions)
    const changed = built({ datasets: [dataset("MIT Renamed Again")], dataDir })
    expect(changed.form).toBe("compiled")
    expect(nameAt(changed.table, "cs.mit.edu")).toBe("MIT Renamed Again")
    // Two merges of the whole built-in index, each with its candidate knowledge: seconds on a busy machine.
  }, 120_000)

  it("are kept in the data directory too, so an emptied temporary directory (a new container) compiles nothing", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "campusgate-index-"))
    const name = `Kept ${randomUUID()}`
    const spec = dataset(name)
    expect(built({ datasets: [spec], dataDir }).form).toBe("compiled")
    const kept = readdirSync(join(dataDir, "cache", "institution-tables"))
    expect(kept).toHaveLength(1)
    rmSync(join(tableCacheDir(), kept[0]!))
    const again = built({ datasets: [spec], dataDir })
    expect(again.form).toBe("cached")
    expect(nameAt(again.table, "cs.mit.edu")).toBe(name)
    // Read back from the data directory, the table is written to the system's cache again.
    expect(existsSync(join(tableCacheDir(), kept[0]!))).toBe(true)
  }, 120_000)
})

describe("a dataset's name (its path as shown)", () => {
  it("is no part of the cache's key: the same dataset elsewhere is read from the cache, under its own name", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "campusgate-index-"))
    const content = dataset(`Moved ${randomUUID()}`).content
    const here = built({ datasets: [{ ...dataset(""), name: "config/partners.csv", content }], dataDir })
    expect(here.form).toBe("compiled")
    const there = built({ datasets: [{ ...dataset(""), name: "/srv/campusgate/partners.csv", content }], dataDir })
    expect(there.form).toBe("cached")
    for (const host of ["cs.mit.edu", "new-partner.org"]) {
      const provenance = JSON.stringify(here.table.lookup(host))
      expect(provenance).toContain('"config/partners.csv"')
      expect(JSON.stringify(there.table.lookup(host))).toBe(
        provenance.replaceAll('"config/partners.csv"', '"/srv/campusgate/partners.csv"')
      )
    }
    expect(there.table.sources.map((source) => source.dataset)).toContain("/srv/campusgate/partners.csv")
    expect(JSON.stringify(there.table.sources)).not.toContain('"config/partners.csv"')
    // What a job thread reads (the shared bytes and the names) answers as the daemon's table does.
    for (const table of [here.table, there.table]) {
      const inThread = InstitutionTable.fromBuffer(table.bytes, table.datasetNames)
      expect(inThread.sources).toEqual(table.sources)
      expect(inThread.lookup("new-partner.org")).toEqual(table.lookup("new-partner.org"))
    }
  }, 120_000)
})

describe("an imported index", () => {
  const importInto = (dataDir: string, name: string) => {
    const builder = fixtureBuilder()
    builder.addInstitution({ name, domains: ["imported.example.org"] }, { dataset: "swot", version: "2" })
    mkdirSync(join(dataDir, "institutions"), { recursive: true })
    writeFileSync(importedIndexFile(dataDir), JSON.stringify(builder.finish()))
  }

  it("is read in the binary form written beside it, and compiled again when the index changed since", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "campusgate-import-"))
    importInto(dataDir, "Imported College")
    compileImportedTable(dataDir)
    const read = built({ dataDir })
    expect(read.form).toBe("imported")
    expect(nameAt(read.table, "imported.example.org")).toBe("Imported College")
    expect(read.table.size).toBe(9)

    // A newer index.json beside the older binary form: the binary form is stale, so not read.
    importInto(dataDir, "Imported College, renamed")
    const later = new Date(Date.now() + 5_000)
    utimesSync(importedIndexFile(dataDir), later, later)
    const recompiled = built({ dataDir })
    expect(recompiled.form).toBe("compiled")
    expect(nameAt(recompiled.table, "imported.example.org")).toBe("Imported College, renamed")
    expect(readFileSync(importedTableFile(dataDir)).length).toBeGreaterThan(0)
    expect(built({ dataDir }).form).toBe("imported")
  })
})
