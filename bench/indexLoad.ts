/**
 * Child process of `npm run bench`: loads the built-in institution index
 * once in a fresh heap and prints load time and retained heap as JSON.
 * Run with `--expose-gc` so the heap figure is after collection.
 */
import { buildInstitutionTable } from "../src/engine/InstitutionIndex.ts"
import { loadBuiltInEmailLists } from "../src/engine/policy/EmailLists.ts"

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {})
gc()
const heapBefore = process.memoryUsage().heapUsed
const started = performance.now()
const table = buildInstitutionTable()
const indexMs = performance.now() - started
gc()
const heapIndex = process.memoryUsage().heapUsed
const listsStarted = performance.now()
const lists = loadBuiltInEmailLists()
const listsMs = performance.now() - listsStarted
gc()
const heapLists = process.memoryUsage().heapUsed
console.log(
  JSON.stringify({
    indexLoadMs: Math.round(indexMs),
    indexHeapMB: Math.round(((heapIndex - heapBefore) / 2 ** 20) * 10) / 10,
    listsLoadMs: Math.round(listsMs),
    listsHeapMB: Math.round(((heapLists - heapIndex) / 2 ** 20) * 10) / 10,
    institutions: table.size,
    emailListEntries: lists.counts.disposable + lists.counts.freeMail
  })
)
