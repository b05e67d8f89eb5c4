/**
 * The file adapter's format: `<dataDir>/stats/<offer id>.json`, one file per
 * offer, holding the offer's public usage (readable as is) and its
 * HyperLogLog registers in base64. Files are replaced whole with
 * `writeFileAtomic`, so a reader (or a restart after a crash) sees one
 * complete version; the temporary files a crash can leave, the hash key and
 * anything else that is not `*.json` are ignored at load. A file that does
 * not decode stops the load with its name rather than being overwritten.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import * as Schema from "effect/Schema"
import { OfferUsage } from "../domain/OfferUsage.ts"
import { isTemporaryFile, writeFileAtomic } from "../store/atomicWrite.ts"
import { REGISTER_COUNT } from "./HyperLogLog.ts"
import { fromOfferUsage, toOfferUsage, type UsageState } from "./UsageState.ts"

export const STATS_DIR = "stats"

const UsageFile = Schema.Struct({
  version: Schema.Literal(1),
  offerId: Schema.String,
  usage: OfferUsage,
  /** Base64 of the 2^14 HyperLogLog registers; null before the first well-formed address. */
  hyperLogLog: Schema.NullOr(Schema.String)
})

const decodeFile = Schema.decodeUnknownSync(Schema.fromJsonString(UsageFile))

export const statsDirectory = (dataDir: string): string => join(dataDir, STATS_DIR)

/** Whether there is a data directory to keep statistics in (the library keeps them in memory otherwise). */
export const hasDataDirectory = (dataDir: string | undefined): dataDir is string =>
  dataDir !== undefined && existsSync(dataDir)

/** The file of one offer; the id is encoded so any string is a safe name. */
export const usageFilePath = (dataDir: string, offerId: string): string =>
  join(statsDirectory(dataDir), `${encodeURIComponent(offerId)}.json`)

export const writeUsageFile = (dataDir: string, offerId: string, state: UsageState): void => {
  const file: typeof UsageFile.Encoded = {
    version: 1,
    offerId,
    usage: toOfferUsage(state),
    hyperLogLog: state.registers === null ? null : Buffer.from(state.registers).toString("base64")
  }
  writeFileAtomic(usageFilePath(dataDir, offerId), `${JSON.stringify(file)}\n`)
}

const decodeRegisters = (base64: string | null, name: string): Uint8Array | null => {
  if (base64 === null) return null
  const bytes = Buffer.from(base64, "base64")
  if (bytes.length !== REGISTER_COUNT) throw new Error(`${name}: expected ${REGISTER_COUNT} HyperLogLog registers`)
  return new Uint8Array(bytes)
}

/** Every offer's stored state; an absent directory is an empty store. */
export const readUsageFiles = (dataDir: string): Map<string, UsageState> => {
  const directory = statsDirectory(dataDir)
  const states = new Map<string, UsageState>()
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
    let file: typeof UsageFile.Type
    try {
      file = decodeFile(readFileSync(path, "utf8"))
    } catch (error) {
      throw new Error(`${path} is not a usage statistics file: ${(error as Error).message}`)
    }
    states.set(file.offerId, fromOfferUsage(file.usage, decodeRegisters(file.hyperLogLog, path)))
  }
  return states
}
