/**
 * The library over a config directory: the same files the daemon serves
 * (and `campusgate check` checks), loaded once and, when asked, kept up to
 * date as they change. Validation is synchronous and reads the snapshot in
 * force at the call.
 *
 * Offer validations are counted in usage statistics (`usage(offerId)`),
 * flushed every `statistics.flushIntervalMs` to `<dataDir>/stats/` when the
 * data directory exists, the same files the daemon keeps (otherwise in
 * memory only). `close()` flushes once more.
 */
import { existsSync } from "node:fs"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { InvalidConfiguration } from "../domain/errors.ts"
import type { OfferUsage } from "../domain/OfferUsage.ts"
import type { OfferValidationResult, ValidationResult } from "../domain/ValidationResult.ts"
import type { Engine } from "../engine/Engine.ts"
import { type InspectResult, inspectInput } from "../engine/inspect.ts"
import { UsageStatistics } from "../stats/UsageStatistics.ts"
import type { Environment } from "./environment.ts"
import { type ConfigSnapshot, LiveConfig, type ReloadOutcome, type ReloadStatus } from "./LiveConfig.ts"

export interface OpenConfigOptions {
  /** The config directory: campusgate.yaml, target-groups/, offers/, api-keys.yaml. */
  readonly configDir: string
  /** The data directory (API-created resources); default: campusgate.yaml's `dataDir`, else `./data`. */
  readonly dataDir?: string | undefined
  /** Watch the files and apply valid changes as they happen (default false). */
  readonly watch?: boolean | undefined
  /** Told about each reload; an invalid change keeps the last good config serving. */
  readonly onReload?: ((outcome: ReloadOutcome) => void) | undefined
  /** Default `process.env` (for `CAMPUSGATE_...` overrides). */
  readonly env?: Environment | undefined
  /** The clock for offer windows (default `Date.now`). */
  readonly now?: (() => number) | undefined
}

export interface ConfiguredCampusgate {
  validate(email: string, targetGroupId: string): ValidationResult
  validateOffer(email: string, offerId: string): OfferValidationResult
  validateMany(emails: ReadonlyArray<string>, targetGroupId: string): Array<ValidationResult>
  validateManyOffer(emails: ReadonlyArray<string>, offerId: string): Array<OfferValidationResult>
  inspect(emailOrDomain: string): InspectResult
  /** The usage statistics of an offer: stored in the data directory plus not yet flushed. */
  usage(offerId: string): Promise<OfferUsage>
  /** Reads the files again now; the old config keeps serving if the new one is invalid. */
  reload(): ReloadOutcome
  /** The snapshot in force: loaded config, engine and generation. */
  current(): ConfigSnapshot
  /** Whether the last reload failed (and why), counts of reloads applied and rejected. */
  status(): ReloadStatus
  readonly engine: Engine
  /** Stops watching and writes pending usage statistics. */
  close(): Promise<void>
}

/** Loads a config directory; throws `InvalidConfiguration` (every problem with file, line and field) if it is not valid. */
export const openConfig = (options: OpenConfigOptions): ConfiguredCampusgate => {
  const live = LiveConfig.load(
    { configDir: options.configDir, dataDir: options.dataDir, env: options.env },
    { watch: options.watch, onReload: options.onReload, now: options.now }
  )
  if (live instanceof InvalidConfiguration) throw live
  const engine = () => live.current().engine
  const { dataDir, settings, secrets } = live.current().config
  const flushIntervalMs = settings.statistics.flushIntervalMs
  const runtime = ManagedRuntime.make(
    existsSync(dataDir)
      ? UsageStatistics.layerFile({ dataDir, flushIntervalMs, secret: secrets.statsSecret })
      : UsageStatistics.layerMemory({ flushIntervalMs, secret: secrets.statsSecret })
  )
  let statistics: UsageStatistics["Service"]
  try {
    statistics = runtime.runSync(Effect.service(UsageStatistics))
  } catch (error) {
    live.close()
    throw error
  }
  return {
    validate: (email, targetGroupId) => engine().validate(email, targetGroupId),
    validateOffer: (email, offerId) => {
      const snapshot = engine()
      const at = snapshot.now()
      const result = snapshot.validateOffer(email, offerId, at)
      statistics.record(offerId, email, result, at)
      return result
    },
    validateMany: (emails, targetGroupId) => engine().validateMany(emails, targetGroupId),
    validateManyOffer: (emails, offerId) => {
      const snapshot = engine()
      const results = snapshot.validateManyOffer(emails, offerId)
      statistics.recordMany(offerId, emails, results, snapshot.now())
      return results
    },
    inspect: (input) => inspectInput(engine().context, input),
    usage: (offerId) => runtime.runPromise(statistics.usage(offerId)),
    reload: () => live.reload(),
    current: () => live.current(),
    status: () => live.status(),
    get engine() {
      return engine()
    },
    close: () => {
      live.close()
      return runtime.dispose()
    }
  }
}
