/**
 * Campusgate as a library. Two ways in:
 * - Effect users compose the services: `Validator.layer(...)` with
 *   `InstitutionIndex.layer(...)` and `EmailPolicyLists.layer`
 *   (or `Validator.layerBuiltIn(...)` for both with the built-in data);
 * - everyone else awaits `createCampusgate(...)` once and calls its plain,
 *   synchronous methods: the engine needs no I/O per email;
 * - or opens a config directory, the same YAML files the daemon serves,
 *   with `openConfig({ configDir, watch: true })`.
 * Both facades count offer validations in the offer's usage statistics
 * (`usage(offerId)`); `openConfig` persists them in its data directory.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import type { OfferInput } from "./domain/Offer.ts"
import type { OfferUsage } from "./domain/OfferUsage.ts"
import type { TargetGroupInput } from "./domain/TargetGroup.ts"
import type { OfferValidationResult, ValidationResult } from "./domain/ValidationResult.ts"
import { EmailPolicyLists } from "./engine/EmailPolicyLists.ts"
import type { Engine } from "./engine/Engine.ts"
import { InstitutionIndex } from "./engine/InstitutionIndex.ts"
import { type InspectResult, inspectInput } from "./engine/inspect.ts"
import type { DatasetSpec } from "./engine/institutions/userDatasets.ts"
import { Validator } from "./engine/Validator.ts"
import { UsageStatistics } from "./stats/UsageStatistics.ts"

export type { ConfigSnapshot, ReloadOutcome, ReloadStatus } from "./config/LiveConfig.ts"
export type { ConfigLocation, LoadedConfig } from "./config/loadConfig.ts"
export { loadConfig } from "./config/loadConfig.ts"
export { type ConfiguredCampusgate, type OpenConfigOptions, openConfig } from "./config/openConfig.ts"
export * from "./domain/errors.ts"
export * from "./domain/Institution.ts"
export * from "./domain/Offer.ts"
export { DailyUsage, emptyOfferUsage, OfferUsage, UniqueEmails } from "./domain/OfferUsage.ts"
export * from "./domain/ReasonCode.ts"
export * from "./domain/TargetGroup.ts"
export * from "./domain/ValidationResult.ts"
export { EmailPolicyLists } from "./engine/EmailPolicyLists.ts"
export { Engine } from "./engine/Engine.ts"
export { canonicalAddress } from "./engine/email/canonical.ts"
export { type EmailParse, type EmailSyntaxOptions, type ParsedEmail, parseEmail } from "./engine/email/parseEmail.ts"
export { InstitutionIndex, type InstitutionIndexOptions } from "./engine/InstitutionIndex.ts"
export type { InspectInstitution, InspectResult } from "./engine/inspect.ts"
export type { HostMatch, InstitutionTable } from "./engine/institutions/InstitutionTable.ts"
export { DatasetError, type DatasetFormat, type DatasetSpec } from "./engine/institutions/userDatasets.ts"
export { Validator, type ValidatorOptions, type ValidatorResources } from "./engine/Validator.ts"
export { UsageStatistics, type UsageStatisticsOptions } from "./stats/UsageStatistics.ts"
export { UsageStore, UsageStoreError } from "./stats/UsageStore.ts"

export interface CampusgateOptions {
  /** Target groups as plain data (the YAML/JSON form); decoded and checked on load. */
  readonly targetGroups: ReadonlyArray<TargetGroupInput>
  readonly offers?: ReadonlyArray<OfferInput> | undefined
  /** Institution datasets merged on top of the built-in data (Hipo JSON, CSV or YAML). */
  readonly datasets?: ReadonlyArray<DatasetSpec> | undefined
  /** Set to false to use only `datasets` (default true). */
  readonly builtInInstitutions?: boolean | undefined
  /** The clock for offer windows (default `Date.now`). */
  readonly now?: (() => number) | undefined
}

export type ValidationTarget = { readonly targetGroupId: string } | { readonly offerId: string }

export interface Campusgate {
  /** One email against a target group. Throws `TargetGroupNotFound` for an unknown id. */
  validate(email: string, targetGroupId: string): ValidationResult
  /** One email against an offer (eligible when any of its target groups matches). Throws `OfferNotFound`. */
  validateOffer(email: string, offerId: string): OfferValidationResult
  /** Many emails, results in input order. */
  validateMany(emails: ReadonlyArray<string>, target: { readonly targetGroupId: string }): Array<ValidationResult>
  validateMany(emails: ReadonlyArray<string>, target: { readonly offerId: string }): Array<OfferValidationResult>
  /** What is known about an email or bare domain, independent of target groups. */
  inspect(emailOrDomain: string): InspectResult
  /**
   * The usage statistics of an offer: every `validateOffer` and `validateMany` against it since
   * `createCampusgate`, kept in memory (empty for an offer never validated).
   */
  usage(offerId: string): Promise<OfferUsage>
  /** Swaps in new target groups and offers atomically; rejects with `InvalidConfiguration` and keeps the old ones. */
  reload(resources: {
    readonly targetGroups: ReadonlyArray<TargetGroupInput>
    readonly offers?: ReadonlyArray<OfferInput>
  }): Promise<void>
  /** The snapshot in force. */
  readonly engine: Engine
  /** Releases the runtime (and with it the usage statistics). */
  close(): Promise<void>
}

/**
 * Loads the institution index and email lists, decodes and compiles the
 * target groups and offers. Rejects with `InvalidConfiguration` (every
 * problem with its path) or `DatasetError`-based problems for bad datasets.
 */
export const createCampusgate = async (options: CampusgateOptions): Promise<Campusgate> => {
  const layer = Validator.layer(options).pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        InstitutionIndex.layer({ builtIn: options.builtInInstitutions, datasets: options.datasets }),
        EmailPolicyLists.layer
      )
    )
  )
  const runtime = ManagedRuntime.make(Layer.merge(layer, UsageStatistics.layerMemory()))
  const validator = await runtime.runPromise(Effect.service(Validator))
  const statistics = await runtime.runPromise(Effect.service(UsageStatistics))
  function validateMany(
    emails: ReadonlyArray<string>,
    target: { readonly targetGroupId: string }
  ): Array<ValidationResult>
  function validateMany(
    emails: ReadonlyArray<string>,
    target: { readonly offerId: string }
  ): Array<OfferValidationResult>
  function validateMany(emails: ReadonlyArray<string>, target: ValidationTarget) {
    const engine = validator.current()
    if (!("offerId" in target)) return engine.validateMany(emails, target.targetGroupId)
    const results = engine.validateManyOffer(emails, target.offerId)
    statistics.recordMany(target.offerId, emails, results, engine.now())
    return results
  }
  return {
    validate: (email, targetGroupId) => validator.current().validate(email, targetGroupId),
    validateOffer: (email, offerId) => {
      const engine = validator.current()
      const at = engine.now()
      const result = engine.validateOffer(email, offerId, at)
      statistics.record(offerId, email, result, at)
      return result
    },
    validateMany,
    inspect: (input) => inspectInput(validator.current().context, input),
    usage: (offerId) => runtime.runPromise(statistics.usage(offerId)),
    reload: (resources) => runtime.runPromise(validator.replace(resources)),
    get engine() {
      return validator.current()
    },
    close: () => runtime.dispose()
  }
}
