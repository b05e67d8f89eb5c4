/**
 * Child process of `npm run bench`: loads the built-in institution index,
 * the email lists and the host directory joining them, once in a fresh heap,
 * and prints each one's load time and retained heap as JSON.
 * Run with `--expose-gc` so the heap figure is after collection.
 */
import { buildInstitutionTable } from "../src/engine/InstitutionIndex.ts"
import { loadBuiltInEmailLists } from "../src/engine/policy/EmailLists.ts"
import { HostDirectory } from "../src/engine/targeting/HostDirectory.ts"

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
const directoryStarted = performance.now()
const directory = new HostDirectory(table, lists)
const directoryMs = performance.now() - directoryStarted
gc()
const heapDirectory = process.memoryUsage().heapUsed
const megabytes = (bytes: number): number => Math.round((bytes / 2 ** 20) * 10) / 10
console.log(
  JSON.stringify({
    indexLoadMs: Math.round(indexMs),
    indexHeapMB: megabytes(heapIndex - heapBefore),
    listsLoadMs: Math.round(listsMs),
    listsHeapMB: megabytes(heapLists - heapIndex),
    directoryLoadMs: Math.round(directoryMs),
    directoryHeapMB: megabytes(heapDirectory - heapLists),
    directoryKeys: directory.size,
    institutions: table.size,
    emailListEntries: lists.counts.disposable + lists.counts.freeMail
  })
)
