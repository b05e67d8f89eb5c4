/**
 * The secret that signs webhooks (job callbacks, verification events):
 * `CAMPUSGATE_WEBHOOK_SECRET` when set, else one generated on first use and
 * kept in `<dataDir>/webhook-secret`
 * (mode 0600, created race-free by `secretFile`), so signatures stay
 * verifiable across restarts.
 */
import { join } from "node:path"
import { secretFile } from "../store/secretFile.ts"

export const WEBHOOK_SECRET_FILE = "webhook-secret"

/** The webhook secret for `dataDir`: `configured` if given, else the stored one, created on first use. */
export const webhookSecretFor = (dataDir: string, configured: string | undefined): string =>
  configured !== undefined && configured !== "" ? configured : secretFile(join(dataDir, WEBHOOK_SECRET_FILE))
