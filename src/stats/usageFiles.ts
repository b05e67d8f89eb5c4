/**
 * The file adapter's format: `<dataDir>/stats/<offer id>.json`, one file per
 * offer, holding the offer's public usage (readable as is), its
 * HyperLogLog registers in base64, and the last step stored of each source
 * applied once (`applied`: job id → checkpoint). Files are replaced whole with
 * `writeFileAtomicAsync`, so a reader (or a restart after a crash) sees one
 * complete version; the temporary files a crash can leave, the hash key and
 * anything else that is not `*.json` are ignored at load. A file that does
 * not decode stops the load with its name rather than being overwritten.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import * as Schema from "effect/Schema"
import { OfferUsage } from "../domain/OfferUsage.ts"
import { isTemporaryFile, writeFileAtomicAsync } from "../store/atomicWrite.ts"
import { fromUsageDelta, toUsageDelta, type UsageState } from "./UsageState.ts"

export const STATS_DIR = "stats"

const UsageFile = Schema.Struct({
  version: Schema.Literal(1),
  offerId: Schema.String,
  usage: OfferUsage,
  /** Base64 of the 2^14 HyperLogLog registers; null before the first well-formed address. */
  hyperLogLog: Schema.NullOr(Schema.String),
  /** Sources applied once (`UsageStore.applyOnce`): the last step stored of each. */
  applied: Schema.optionalKey(Schema.Record(Schema.String, Schema.Number))
})

/** What the store keeps of an offer: its counters and the sources applied once. */
export interface StoredUsage {
  readonly state: UsageState
  readonly applied: ReadonlyMap<string, number>
}

const decodeFile = Schema.decodeUnknownSync(Schema.fromJsonString(UsageFile))

export const statsDirectory = (dataDir: string): string => join(dataDir, STATS_DIR)

/** Whether there is a data directory to keep statistics in (the library keeps them in memory otherwise). */
export const hasDataDirectory = (dataDir: string | undefined): dataDir is string =>
  dataDir !== undefined && existsSync(dataDir)

/** The file of one offer; the id is encoded so any string is a safe name. */
export const usageFilePath = (dataDir: string, offerId: string): string =>
  join(statsDirectory(dataDir), `${encodeURIComponent(offerId)}.json`)

/** Replaces the offer's file with `stored` (`writeFileAtomicAsync`: the steps on libuv's pool). */
export const writeUsageFile = (dataDir: string, offerId: string, stored: StoredUsage): Promise<void> => {
  const file: typeof UsageFile.Encoded = {
    version: 1,
    offerId,
    ...toUsageDelta(stored.state),
    ...(stored.applied.size === 0 ? {} : { applied: Object.fromEntries(stored.applied) })
  }
  return writeFileAtomicAsync(usageFilePath(dataDir, offerId), `${JSON.stringify(file)}\n`)
}

/** Every offer's stored state; an absent directory is an empty store. */
export const readUsageFiles = (dataDir: string): Map<string, StoredUsage> => {
  const directory = statsDirectory(dataDir)
  const states = new Map<string, StoredUsage>()
  let names: Array<string>
  try {
    names = readdirSync(directory)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return states
    throw error
  }
  for (const name of names.sort()) {
    if (isTemporaryFile(name) || !name.endsWith(".json")) continue
    const path = join(directory, name)
    let stored: StoredUsage & { readonly offerId: string }
    try {
      const file = decodeFile(readFileSync(path, "utf8"))
      stored = {
        offerId: file.offerId,
        state: fromUsageDelta(file),
        applied: new Map(Object.entries(file.applied ?? {}))
      }
    } catch (error) {
      throw new Error(`${path} is not a usage statistics file: ${(error as Error).message}`)
    }
    states.set(stored.offerId, { state: stored.state, applied: stored.applied })
  }
  return states
}
