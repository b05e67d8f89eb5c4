/**
 * The key of the unique-email hash. From `CAMPUSGATE_STATS_SECRET` when set
 * (so replicas sharing a store agree); otherwise generated once per data
 * directory and kept in `<dataDir>/stats/hash-key` (mode 0600), so counts
 * stay consistent across restarts (`secretFile`: two processes starting
 * together end up with the same key). Changing the key
 * makes addresses already counted count again (the registers are kept).
 */
import { createHash, randomBytes } from "node:crypto"
import { join } from "node:path"
import { type HashKey, hashKeyFromBytes } from "../engine/email/canonicalHash.ts"
import { secretFile } from "../store/secretFile.ts"
import { statsDirectory } from "./usageFiles.ts"

export const HASH_KEY_FILE = "hash-key"

const derive = (material: string): HashKey =>
  hashKeyFromBytes(createHash("sha256").update("campusgate-stats-hash-key\0").update(material).digest())

/** A key from a secret (the same secret always gives the same key). */
export const hashKeyFromSecret = (secret: string): HashKey => derive(secret)

/** A fresh random key (memory-only statistics). */
export const randomHashKey = (): HashKey => derive(randomBytes(32).toString("hex"))

/** The key for a data directory: from `secret` when given, else its key file. */
export const hashKeyFor = (dataDir: string, secret: string | undefined): HashKey =>
  secret === undefined
    ? derive(secretFile(join(statsDirectory(dataDir), HASH_KEY_FILE), () => randomBytes(32).toString("hex")))
    : hashKeyFromSecret(secret)
