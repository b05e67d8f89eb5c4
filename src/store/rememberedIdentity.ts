/**
 * The store identity a data directory remembers (`store-identity.json`:
 * the store's kind, its address without credentials, the id), written
 * atomically; what `store/storeIdentity.ts` compares the store's own with.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import * as Schema from "effect/Schema"
import { ensureDirectory, writeFileAtomic } from "./atomicWrite.ts"

/** The file in a data directory that remembers the store's identity. */
export const STORE_IDENTITY_FILE = "store-identity.json"

/** The identity a data directory remembers. */
export const RememberedIdentity = Schema.Struct({
  kind: Schema.String,
  /** The store's address without credentials, for the operator. */
  address: Schema.String,
  id: Schema.String
})
export type RememberedIdentity = typeof RememberedIdentity.Type

const decodeRemembered = Schema.decodeUnknownSync(Schema.fromJsonString(RememberedIdentity))

/** The identity `dataDir` remembers; undefined when it remembers none. */
export const readRemembered = (dataDir: string): RememberedIdentity | undefined => {
  let text: string
  try {
    text = readFileSync(join(dataDir, STORE_IDENTITY_FILE), "utf8")
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined
    throw error
  }
  return decodeRemembered(text)
}

export const remember = (dataDir: string, identity: RememberedIdentity): void => {
  ensureDirectory(dataDir)
  writeFileAtomic(join(dataDir, STORE_IDENTITY_FILE), `${JSON.stringify(identity, null, 2)}\n`)
}

/** `url` without its user and password: what the log and the file may name. */
export const addressOf = (url: string, keyPrefix?: string): string => {
  try {
    const parsed = new URL(url)
    parsed.username = ""
    parsed.password = ""
    parsed.search = ""
    return `${parsed.toString()}${keyPrefix === undefined ? "" : ` (key prefix ${keyPrefix})`}`
  } catch {
    return "(an address that does not parse)"
  }
}
