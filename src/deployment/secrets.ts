/**
 * The secrets a deployment generates for itself when the environment does
 * not set them, and where each is kept: a file in the data directory (one
 * daemon, `store/secretFile.ts`), a key in Redis (daemons sharing it,
 * `store/redisSecret.ts`) or a row in PostgreSQL (daemons sharing it,
 * `store/postgresSecret.ts`). This list is the one place that says which
 * exist: the stores of every kind (`deployment/stores.ts`) read them through it, and
 * `campusgate migrate`, `backup` and `restore` (`cli/copy/storeKinds.ts`) copy every
 * one a store holds (in a data directory: every one listed here), so moving
 * between kinds keeps webhook signatures, verification hashes, unique-email
 * counts and console sessions valid.
 */
import { randomBytes } from "node:crypto"
import { join } from "node:path"
import type { Secrets } from "../config/environment.ts"
import { HASH_KEY_FILE } from "../stats/hashKey.ts"
import { statsDirectory } from "../stats/usageFiles.ts"
import { secretFile } from "../store/secretFile.ts"
import { VERIFICATION_SECRET_FILE } from "../verification/secrets.ts"
import { WEBHOOK_SECRET_FILE } from "../webhooks/secret.ts"

/** The console secret's file in a data directory (it signs console sessions, `server/consoleSession.ts`). */
export const CONSOLE_SECRET_FILE = "console-secret"

export interface DeploymentSecret {
  /** Its name in Redis (`<prefix>secrets:<name>`) and in PostgreSQL (`campusgate_secrets`). */
  readonly name: string
  /** Its file in a data directory. */
  readonly file: (dataDir: string) => string
  /** The value the environment sets, if any (`config/environment.ts`). */
  readonly configured: (secrets: Secrets) => string | undefined
  /** How a new one is made (default: 32 random bytes, base64url). */
  readonly generate?: () => string
}

export const deploymentSecrets = {
  webhook: {
    name: "webhook-secret",
    file: (dataDir) => join(dataDir, WEBHOOK_SECRET_FILE),
    configured: (secrets) => secrets.webhookSecret
  },
  verification: {
    name: "verification-secret",
    file: (dataDir) => join(dataDir, VERIFICATION_SECRET_FILE),
    configured: (secrets) => secrets.verificationSecret
  },
  statsHashKey: {
    name: "stats-hash-key",
    file: (dataDir) => join(statsDirectory(dataDir), HASH_KEY_FILE),
    configured: (secrets) => secrets.statsSecret,
    generate: () => randomBytes(32).toString("hex")
  },
  console: {
    name: "console-secret",
    file: (dataDir) => join(dataDir, CONSOLE_SECRET_FILE),
    configured: (secrets) => secrets.consoleSecret
  }
} as const satisfies Record<string, DeploymentSecret>

/** The value the environment sets for `secret`, if any (an empty one is none). */
export const configuredValue = (secret: DeploymentSecret, secrets: Secrets): string | undefined => {
  const value = secret.configured(secrets)
  return value === undefined || value === "" ? undefined : value
}

/** The secret as one daemon on files has it: the environment's, else its file, created on first use. */
export const secretInDataDir = (secret: DeploymentSecret, dataDir: string, secrets: Secrets): string =>
  configuredValue(secret, secrets) ?? secretFile(secret.file(dataDir), secret.generate)
