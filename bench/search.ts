/**
 * `npm run bench:search`: institution search over the whole built-in index.
 * Queries are made the way people type them, from the index's own names
 * (deterministic): one to three words of a name, each cut to a prefix of
 * three or more letters, in any order, a fifth with a country filter and a
 * tenth with a type filter, plus an acronym or domain label now and then.
 * Reports the index build time and heap, and per-search latency (p50, p99,
 * max over all queries after a warm-up). Goal: p99 < 5 ms. Prints progress,
 * then one final JSON line.
 */

import { nameWords } from "../src/domain/nameKey.ts"
import { buildInstitutionTable } from "../src/engine/InstitutionIndex.ts"
import { InstitutionSearch } from "../src/engine/institutions/InstitutionSearch.ts"
import { random } from "./generateEmails.ts"

const count = Number(process.env.BENCH_QUERIES ?? 20_000)
const table = buildInstitutionTable()
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {})
gc()
const used = () => process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers
const heapBefore = used()
const buildStarted = performance.now()
const search = InstitutionSearch.of(table)
const buildMs = performance.now() - buildStarted
gc()
/** Heap and typed-array memory the search index holds. */
const heapMB = Math.round(((used() - heapBefore) / 2 ** 20) * 10) / 10

const next = random(7)
const pick = <A>(items: ReadonlyArray<A>): A => items[Math.floor(next() * items.length)]!
const types = ["university", "college", "school", "research", "other"] as const
const queries = Array.from({ length: count }, () => {
  const institution = pick(table.institutions)
  const words = nameWords(institution.name ?? institution.id).filter((w) => w.length >= 3)
  let q: string
  if (words.length === 0 || next() < 0.1) q = institution.domains[0]!.split(".")[0]!
  else {
    const chosen = Array.from({ length: 1 + Math.floor(next() * Math.min(3, words.length)) }, () => pick(words))
    q = chosen.map((w) => w.slice(0, 3 + Math.floor(next() * Math.max(1, w.length - 2)))).join(" ")
  }
  const roll = next()
  return {
    q,
    country: roll < 0.2 ? (institution.country ?? undefined) : undefined,
    type: roll > 0.9 ? pick(types) : undefined,
    limit: 20
  }
})

for (const query of queries.slice(0, 2000)) search.search(query)
const times = new Float64Array(queries.length)
let found = 0
for (let i = 0; i < queries.length; i++) {
  const started = performance.now()
  found += search.search(queries[i]!).institutions.length > 0 ? 1 : 0
  times[i] = performance.now() - started
}
times.sort()
const at = (p: number) => Math.round(times[Math.min(times.length - 1, Math.floor(p * times.length))]! * 1000) / 1000
console.error(
  `search index: ${search.size.toLocaleString()} institutions, built in ${Math.round(buildMs)} ms, ${heapMB} MB heap`
)
console.error(`${queries.length.toLocaleString()} searches: p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms`)
console.log(
  JSON.stringify({
    institutions: search.size,
    queries: queries.length,
    withResults: found,
    buildMs: Math.round(buildMs),
    heapMB,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    maxMs: at(1),
    goals: { p99: at(0.99) < 5 }
  })
)
