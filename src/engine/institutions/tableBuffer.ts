/**
 * The institution table's binary form: what `npm run build` writes to
 * `dist/data/institutions.bin` (and `campusgate data import` beside its
 * index), read at start with one file read and no per-entry work. Typed
 * arrays over one buffer:
 *
 * - every string once, in one UTF-8 blob, by number (`stringStarts`);
 * - the host entries (listed, stoplisted, non-institution and zone domains,
 *   and the abused sub-domains of listed ones, resolved at compile time) as
 *   rows of four words, in a hash table of their domains (FNV-1a over the
 *   domain's characters, open addressing), so a lookup hashes the suffix of
 *   a host in place and compares it with the blob;
 * - the institutions and non-institutions as rows of string numbers and
 *   positions in one pool of lists, decoded into objects only when a result
 *   needs them (`InstitutionTable`).
 *
 * The small tables (sources, evidence, zones, type rules, siblings) stay JSON
 * in the header; the candidate knowledge built from the same data
 * (`candidates.ts`), when compiled in, is JSON after the blob, parsed on the
 * first unknown host. Compiling is `encodeTable`, from the same `InstitutionsData`
 * the JSON index holds, so both forms answer alike; `fromData` tables (user
 * datasets merged, reviewed institutions) are compiled at load the same way.
 */
import type { DataSource, HostRole } from "../../domain/Institution.ts"
import { type CandidateKnowledge, encodeKnowledge } from "./candidates.ts"
import type { EvidenceRow, InstitutionsData, SuffixRuleRow, TypeRuleRow } from "./InstitutionsData.ts"

/** Changes whenever the layout does: a file of another version is not read. */
export const tableBufferFormat = "campusgate-institution-table/1"

const magic = 0x43474954 // "CGIT"

export const entryKind = { listed: 0, deny: 1, nonInstitution: 2, suffix: 3 } as const
export const roleCodes: ReadonlyArray<HostRole> = ["mixed", "student", "staff", "alumni"]

/** Words of an entry: its domain's string, kind | role << 4 | abused << 8, what it refers to, its domain's hash. */
export const ENTRY_WORDS = 4
/** Words of an institution row (see `encodeTable` for their order). */
export const ROW_WORDS = 18
/** Words of a non-institution row: domain, kind, name, country (strings), source, rule (string). */
export const NON_INSTITUTION_WORDS = 6

interface Header {
  readonly format: typeof tableBufferFormat
  readonly sources: ReadonlyArray<DataSource>
  readonly evidence: ReadonlyArray<EvidenceRow>
  readonly suffixRules: ReadonlyArray<SuffixRuleRow>
  readonly siblings: string
  readonly typeRules: ReadonlyArray<TypeRuleRow>
  /** What the table was compiled from, when the compiler was told (`encodeTable`), to tell a stale table. */
  readonly compiledFrom?: string | undefined
  /** Element counts of the sections, in file order. */
  readonly counts: {
    readonly strings: number
    readonly slots: number
    readonly entries: number
    readonly rows: number
    readonly pool: number
    readonly nonInstitutions: number
    readonly blob: number
    /** Bytes of the candidate knowledge's JSON (`candidates.ts`), after the blob; 0 when not compiled in. */
    readonly knowledge: number
  }
}

/** A decoded buffer: the header's tables and views over the sections (nothing copied). */
export interface TableBuffer {
  /** The compiled form the rest are views of. */
  readonly bytes: Uint8Array
  readonly sources: ReadonlyArray<DataSource>
  readonly evidence: ReadonlyArray<EvidenceRow>
  readonly suffixRules: ReadonlyArray<SuffixRuleRow>
  readonly siblings: string
  readonly typeRules: ReadonlyArray<TypeRuleRow>
  readonly compiledFrom: string | undefined
  /** Where string `i` starts in `blob`; it ends where `i + 1` starts. */
  readonly stringStarts: Uint32Array
  /** Entry number + 1 in each slot, 0 for an empty one; the length is a power of two. */
  readonly slots: Uint32Array
  readonly entries: Uint32Array
  readonly rows: Int32Array
  readonly pool: Int32Array
  readonly nonInstitutions: Int32Array
  readonly blob: Buffer
  /** The candidate knowledge compiled with the table (`encodeKnowledge`), if it was. */
  readonly knowledge: Buffer | undefined
}

/** FNV-1a over the characters of `text` from `start`: a host's suffix is hashed where it lies, without a copy. */
export const hashFrom = (text: string, start: number): number => {
  let hash = 0x811c9dc5
  for (let i = start; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193)
  return hash >>> 0
}

/** Numbers each distinct string once, in order of first use. */
class Strings {
  readonly #numbers = new Map<string, number>()
  readonly list: Array<string> = []

  of(text: string | null): number {
    if (text === null) return -1
    let n = this.#numbers.get(text)
    if (n === undefined) {
      n = this.list.length
      this.list.push(text)
      this.#numbers.set(text, n)
    }
    return n
  }
}

interface PlannedEntry {
  readonly domain: string
  readonly kind: number
  readonly ref: number
  readonly role: HostRole
  readonly abused: boolean
}

/**
 * The host entries as `InstitutionTable` has always resolved them: a listed
 * domain (a later institution listing it wins), then non-institutions,
 * stoplisted hosts and zones where the slot is free, then each abused host
 * that is not itself an entry, resolved to the listed domain above it.
 */
const planEntries = (data: InstitutionsData): Map<string, PlannedEntry> => {
  const entries = new Map<string, PlannedEntry>()
  const abused = new Set(data.abused.map(([domain]) => domain))
  const roles = new Map(data.roles)
  data.institutions.forEach((row, ref) => {
    for (const domain of row[7]) {
      entries.set(domain, {
        domain,
        kind: entryKind.listed,
        ref,
        role: roles.get(domain) ?? "mixed",
        abused: abused.has(domain)
      })
    }
  })
  data.nonInstitutions.forEach(([domain], ref) => {
    if (!entries.has(domain))
      entries.set(domain, { domain, kind: entryKind.nonInstitution, ref, role: "mixed", abused: false })
  })
  for (const [domain, source] of data.deny) {
    if (!entries.has(domain))
      entries.set(domain, { domain, kind: entryKind.deny, ref: source, role: "mixed", abused: false })
  }
  data.suffixRules.forEach(([suffix], ref) => {
    if (!entries.has(suffix))
      entries.set(suffix, { domain: suffix, kind: entryKind.suffix, ref, role: "mixed", abused: false })
  })
  // An abused subdomain of a listed institution (`academia.umb.edu.co`) resolves to that institution, flagged.
  for (const domain of abused) {
    if (entries.has(domain)) continue
    const parent = nearestEntry(entries, domain)
    if (parent?.kind === entryKind.listed) entries.set(domain, { ...parent, domain, abused: true })
  }
  return entries
}

/** The first entry met walking `host` from its longest suffix down; a zone counts only with a label in front. */
const nearestEntry = (entries: Map<string, PlannedEntry>, host: string): PlannedEntry | undefined => {
  let previous = -1
  for (let i = 0; ; ) {
    const entry = entries.get(i === 0 ? host : host.slice(i))
    if (entry !== undefined && (entry.kind !== entryKind.suffix || previous >= 0)) return entry
    previous = i
    i = host.indexOf(".", i) + 1
    if (i === 0) return undefined
  }
}

const align4 = (n: number): number => (n + 3) & ~3

/**
 * Compiles `data` into the binary form; `compiledFrom` names its input, for
 * a reader to tell a stale table; `knowledge`, the candidate knowledge
 * built from the same data, is kept with it (`CandidateScorer.ts`).
 */
export const encodeTable = (
  data: InstitutionsData,
  options: { readonly compiledFrom?: string | undefined; readonly knowledge?: CandidateKnowledge | undefined } = {}
): Uint8Array => {
  const strings = new Strings()
  const planned = [...planEntries(data).values()]
  // Domains first, so the strings compared on every probe sit together at the blob's start.
  for (const entry of planned) {
    if (/[^\x20-\x7e]/.test(entry.domain)) throw new Error(`institution index: "${entry.domain}" is not ASCII`)
    strings.of(entry.domain)
  }
  const capacity = 2 ** Math.ceil(Math.log2(Math.max(2, planned.length * 2)))
  const slots = new Uint32Array(capacity)
  const entries = new Uint32Array(planned.length * ENTRY_WORDS)
  planned.forEach((entry, e) => {
    const hash = hashFrom(entry.domain, 0)
    const at = e * ENTRY_WORDS
    entries[at] = strings.of(entry.domain)
    entries[at + 1] = entry.kind | (roleCodes.indexOf(entry.role) << 4) | (entry.abused ? 1 << 8 : 0)
    entries[at + 2] = entry.ref
    entries[at + 3] = hash
    let slot = hash & (capacity - 1)
    while (slots[slot] !== 0) slot = (slot + 1) & (capacity - 1)
    slots[slot] = e + 1
  })
  const pool: Array<number> = []
  const list = (items: ReadonlyArray<number>): [number, number] => {
    const start = pool.length
    for (const item of items) pool.push(item)
    return [start, items.length]
  }
  const abused = new Set(data.abused.map(([domain]) => domain))
  const rows = new Int32Array(data.institutions.length * ROW_WORDS)
  data.institutions.forEach((row, r) => {
    const [id, name, country, countrySource, region, type, sourceIds, domains, names, ror, facts] = row
    const words = [
      strings.of(id),
      strings.of(name),
      strings.of(country),
      strings.of(countrySource),
      strings.of(region),
      strings.of(type),
      strings.of(ror),
      ...list(sourceIds),
      ...list(domains.map((d) => strings.of(d))),
      ...list(names.map((n) => strings.of(n))),
      ...facts,
      domains.some((d) => abused.has(d)) ? 1 : 0
    ]
    rows.set(words, r * ROW_WORDS)
  })
  const nonInstitutions = new Int32Array(data.nonInstitutions.length * NON_INSTITUTION_WORDS)
  data.nonInstitutions.forEach(([domain, kind, name, country, source, rule], r) => {
    nonInstitutions.set(
      [strings.of(domain), strings.of(kind), strings.of(name), strings.of(country), source, strings.of(rule)],
      r * NON_INSTITUTION_WORDS
    )
  })
  const encoder = new TextEncoder()
  const knowledgeBytes =
    options.knowledge === undefined ? new Uint8Array(0) : encoder.encode(encodeKnowledge(options.knowledge))
  const encoded = strings.list.map((text) => encoder.encode(text))
  const stringStarts = new Uint32Array(encoded.length + 1)
  let blobLength = 0
  encoded.forEach((bytes, i) => {
    stringStarts[i] = blobLength
    blobLength += bytes.length
  })
  stringStarts[encoded.length] = blobLength
  const header: Header = {
    format: tableBufferFormat,
    sources: data.sources,
    evidence: data.evidence,
    suffixRules: data.suffixRules,
    siblings: data.siblings ?? "",
    typeRules: data.typeRules ?? [],
    compiledFrom: options.compiledFrom,
    counts: {
      strings: stringStarts.length,
      slots: slots.length,
      entries: entries.length,
      rows: rows.length,
      pool: pool.length,
      nonInstitutions: nonInstitutions.length,
      blob: blobLength,
      knowledge: knowledgeBytes.length
    }
  }
  const headerBytes = encoder.encode(JSON.stringify(header))
  const sections = [stringStarts, slots, entries, rows, Int32Array.from(pool), nonInstitutions]
  const start = align4(8 + headerBytes.length)
  const total = start + sections.reduce((sum, s) => sum + s.byteLength, 0) + blobLength + knowledgeBytes.length
  const out = new Uint8Array(total)
  const view = new DataView(out.buffer)
  view.setUint32(0, magic, true)
  view.setUint32(4, headerBytes.length, true)
  out.set(headerBytes, 8)
  let at = start
  for (const section of sections) {
    out.set(new Uint8Array(section.buffer, section.byteOffset, section.byteLength), at)
    at += section.byteLength
  }
  for (const bytes of encoded) {
    out.set(bytes, at)
    at += bytes.length
  }
  out.set(knowledgeBytes, at)
  return out
}

/**
 * Views over a compiled buffer (copied once if it does not start on a
 * 4-byte boundary); throws when it is not one or of another version.
 * The typed arrays are little-endian, as on every platform Node supports.
 */
export const decodeTable = (given: Uint8Array): TableBuffer => {
  const bytes = given.byteOffset % 4 === 0 ? given : Uint8Array.from(given)
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (bytes.byteLength < 8 || view.getUint32(0, true) !== magic) throw new Error("not a compiled institution table")
  const headerLength = view.getUint32(4, true)
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const header = JSON.parse(buffer.toString("utf8", 8, 8 + headerLength)) as Header
  if (header.format !== tableBufferFormat) {
    throw new Error(`compiled institution table has format "${header.format}", expected "${tableBufferFormat}"`)
  }
  let at = bytes.byteOffset + align4(8 + headerLength)
  const take = <T>(make: new (buffer: ArrayBufferLike, offset: number, length: number) => T, length: number): T => {
    const made = new make(bytes.buffer, at, length)
    at += length * 4
    return made
  }
  const { counts } = header
  const stringStarts = take(Uint32Array, counts.strings)
  const slots = take(Uint32Array, counts.slots)
  const entries = take(Uint32Array, counts.entries)
  const rows = take(Int32Array, counts.rows)
  const pool = take(Int32Array, counts.pool)
  const nonInstitutions = take(Int32Array, counts.nonInstitutions)
  if (at - bytes.byteOffset + counts.blob + counts.knowledge !== bytes.byteLength) {
    throw new Error("compiled institution table is truncated")
  }
  return {
    bytes,
    sources: header.sources,
    evidence: header.evidence,
    suffixRules: header.suffixRules,
    siblings: header.siblings,
    typeRules: header.typeRules,
    compiledFrom: header.compiledFrom,
    stringStarts,
    slots,
    entries,
    rows,
    pool,
    nonInstitutions,
    blob: Buffer.from(bytes.buffer, at, counts.blob),
    knowledge: counts.knowledge === 0 ? undefined : Buffer.from(bytes.buffer, at + counts.blob, counts.knowledge)
  }
}

/**
 * `buffer` with every dataset name it holds (a source's `dataset`, an
 * evidence row's source, a zone's reference) passed through `rename`: a
 * table compiled under stand-in names, read under the names in force.
 */
export const renameDatasets = (buffer: TableBuffer, rename: (name: string) => string): TableBuffer => ({
  ...buffer,
  sources: buffer.sources.map((source) => ({ ...source, dataset: rename(source.dataset) })),
  evidence: buffer.evidence.map(([source, ...rest]) => [rename(source), ...rest] as unknown as EvidenceRow),
  suffixRules: buffer.suffixRules.map((rule) => {
    const renamed = [...rule] as [...SuffixRuleRow]
    renamed[7] = rename(rule[7])
    return renamed
  })
})
