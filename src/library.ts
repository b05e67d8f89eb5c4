/**
 * The library's Promise facade, one entry for both ways in:
 * `createCampusgate({ targetGroups, offers })` with resources in memory, or
 * `createCampusgate({ configDir, watch })` over a config directory, the same
 * YAML files the daemon serves. Both are the application core (`app/`)
 * with the library as the viewer that sees every team: the live snapshot,
 * and Validation, which counts offer validations in usage statistics (in
 * memory, or flushed to `<dataDir>/stats/` when a config directory's data
 * directory exists). Validation methods are synchronous: the engine needs
 * no I/O per email. `openConfig` is the former synchronous entry for a
 * config directory, kept as a deprecated alias.
 *
 * `verifications` (built on first use) proves ownership as the daemon does:
 * with a config directory whose data directory exists, over its files and
 * its mail settings; otherwise in memory, sending through `verification.send`
 * or into `verification.outboxDir`.
 */
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { type InstitutionPage, makeInstitutions } from "./app/Institutions.ts"
import {
  type ConfigSnapshot,
  LiveSnapshot,
  type LiveSnapshotOptions,
  type ReloadOutcome,
  type ReloadStatus,
  Snapshot
} from "./app/Snapshot.ts"
import { directorySource, resourcesSource, type SnapshotSource } from "./app/sources.ts"
import { Validation, ValidationCounters, ValidationError } from "./app/Validation.ts"
import type { Environment } from "./config/environment.ts"
import { configFromResources } from "./config/resourcesConfig.ts"
import type { ExplainedValidationResult } from "./domain/Explanation.ts"
import { InvalidConfiguration } from "./domain/errors.ts"
import type { InstitutionMatch } from "./domain/InstitutionMatch.ts"
import type { OfferInput } from "./domain/Offer.ts"
import type { OfferUsage } from "./domain/OfferUsage.ts"
import type { TargetGroupInput } from "./domain/TargetGroup.ts"
import type { OfferValidationResult, ValidationResult } from "./domain/ValidationResult.ts"
import { ALL_TEAMS } from "./domain/visibility.ts"
import type { Engine } from "./engine/Engine.ts"
import type { InspectResult } from "./engine/inspect.ts"
import type { DatasetSpec } from "./engine/institutions/userDatasets.ts"
import {
  type LibraryVerificationOptions,
  makeLibraryVerifications,
  type VerificationsFacade
} from "./libraryVerifications.ts"
import { UsageStatistics } from "./stats/UsageStatistics.ts"
import { hasDataDirectory } from "./stats/usageFiles.ts"

/** Target groups and offers in memory. */
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
  /** How `verifications` sends and keeps what it needs (in memory here). */
  readonly verification?: LibraryVerificationOptions | undefined
}

/** A config directory: campusgate.yaml, target-groups/, offers/, api-keys.yaml. */
export interface OpenConfigOptions {
  readonly configDir: string
  /** The data directory (API-created resources, statistics); default: campusgate.yaml's `dataDir`, else `./data`. */
  readonly dataDir?: string | undefined
  /** Watch the files and apply valid changes as they happen (default false). */
  readonly watch?: boolean | undefined
  /** Told about each reload; an invalid change keeps the last good config serving. */
  readonly onReload?: ((outcome: ReloadOutcome) => void) | undefined
  /** Default `process.env` (for `CAMPUSGATE_...` overrides). */
  readonly env?: Environment | undefined
  /** The clock for offer windows (default `Date.now`). */
  readonly now?: (() => number) | undefined
  /** How `verifications` sends (default: campusgate.yaml's mail settings) and where links point. */
  readonly verification?: LibraryVerificationOptions | undefined
}

export interface InstitutionSearchQuery {
  readonly q?: string | undefined
  /** ISO 3166-1 alpha-2. */
  readonly country?: string | undefined
  readonly type?: "university" | "college" | "school" | "research" | "other" | undefined
  /** Default 20. */
  readonly limit?: number | undefined
  /** Matches to skip (default 0). */
  readonly offset?: number | undefined
}

export type ValidationTarget = { readonly targetGroupId: string } | { readonly offerId: string }

/**
 * A target as the library's callers give it: a target group's id, or
 * `{ targetGroupId }` / `{ offerId }` with a string id. Anything else (as a
 * caller without types may pass) is a `TypeError` that says what was given.
 */
const targetOf = (given: unknown, method: string): ValidationTarget => {
  if (typeof given === "string") return { targetGroupId: given }
  if (typeof given === "object" && given !== null) {
    const { targetGroupId, offerId } = given as { targetGroupId?: unknown; offerId?: unknown }
    if (typeof targetGroupId === "string" && offerId === undefined) return { targetGroupId }
    if (typeof offerId === "string" && targetGroupId === undefined) return { offerId }
  }
  let shown: string
  try {
    shown = (JSON.stringify(given) ?? String(given)).slice(0, 200)
  } catch {
    shown = String(given)
  }
  throw new TypeError(
    `${method}: the target must be a target group's id, { targetGroupId: string } or { offerId: string }; got ${shown}.`
  )
}

/** How `validate` answers. */
export interface ValidateOptions {
  /**
   * Add `explanation`: per criterion whether it passed, failed or does not
   * apply, in a sentence, and the institution (or other organisation) the
   * host belongs to — what `explain: true` adds over HTTP.
   */
  readonly explain?: boolean | undefined
}

/** What both entries answer. */
interface CampusgateCore {
  /**
   * One email against a target group (its id, or `{ targetGroupId }`).
   * Throws `TargetGroupNotFound` for an unknown id, and a `TypeError` for a
   * target of another shape.
   */
  validate(email: string, target: string | { readonly targetGroupId: string }): ValidationResult
  /** The result explained per criterion, the result itself unchanged. */
  validate(
    email: string,
    target: string | { readonly targetGroupId: string },
    options: { readonly explain: true }
  ): ExplainedValidationResult
  validate(
    email: string,
    target: string | { readonly targetGroupId: string },
    options?: ValidateOptions
  ): ValidationResult | ExplainedValidationResult
  /** One email against an offer, as `validateOffer`; `explain` is for target groups only. */
  validate(email: string, target: { readonly offerId: string }): OfferValidationResult
  /** One email against an offer (eligible when any of its target groups matches). Throws `OfferNotFound`. */
  validateOffer(email: string, offerId: string): OfferValidationResult
  /** Many emails, results in input order (a bare string names a target group). */
  validateMany(
    emails: ReadonlyArray<string>,
    target: string | { readonly targetGroupId: string }
  ): Array<ValidationResult>
  validateMany(emails: ReadonlyArray<string>, target: { readonly offerId: string }): Array<OfferValidationResult>
  /** Many emails against an offer, results in input order. */
  validateManyOffer(emails: ReadonlyArray<string>, offerId: string): Array<OfferValidationResult>
  /** What is known about an email or bare domain, independent of target groups. */
  inspect(emailOrDomain: string): InspectResult
  /**
   * Institutions by name, other name, acronym or domain label (accent- and
   * case-insensitive, every word a prefix), filtered by country and type;
   * without `q`, every institution passing the filters, by name. The first
   * call builds the search index (a few hundred milliseconds).
   */
  searchInstitutions(query: InstitutionSearchQuery): InstitutionPage
  /** The institution an email address or host belongs to and whom the host serves; undefined when none. */
  institutionOf(emailOrDomain: string): InstitutionMatch | undefined
  /** An offer's usage statistics: every offer validation counted (empty for an offer never validated). */
  usage(offerId: string): Promise<OfferUsage>
  /** The snapshot in force: loaded config, engine and generation. */
  current(): ConfigSnapshot
  /** Whether the last reload failed (and why), counts of reloads applied and rejected. */
  status(): ReloadStatus
  /** The engine in force. */
  readonly engine: Engine
  /** Proof of ownership: codes and links mailed to eligible addresses, signed eligibility tokens. */
  readonly verifications: VerificationsFacade
  /** Stops watching and writes pending usage statistics. */
  close(): Promise<void>
}

export interface Campusgate extends CampusgateCore {
  /**
   * Resources in memory: swaps in new target groups and offers. A config
   * directory: reads the files again. Rejects with `InvalidConfiguration`
   * and keeps the old ones when the new ones are not valid.
   */
  reload(resources?: {
    readonly targetGroups: ReadonlyArray<TargetGroupInput>
    readonly offers?: ReadonlyArray<OfferInput>
  }): Promise<void>
}

/** @deprecated The former config-directory entry: use `createCampusgate({ configDir })`. */
export interface ConfiguredCampusgate extends CampusgateCore {
  /** Reads the files again now; the old config keeps serving if the new one is invalid. */
  reload(): ReloadOutcome
}

const usageLayerFor = (live: LiveSnapshot) => {
  const { dataDir, settings, secrets } = live.current().config
  const options = { flushIntervalMs: settings.statistics.flushIntervalMs, secret: secrets.statsSecret }
  return hasDataDirectory(dataDir)
    ? UsageStatistics.layerFile({ dataDir, ...options })
    : UsageStatistics.layerMemory(options)
}

/** The facade over a loaded snapshot holder, with its entry's `reload`; closing it closes the holder. */
const facadeOver = <Reload>(
  live: LiveSnapshot,
  reload: Reload,
  verification: LibraryVerificationOptions = {}
): CampusgateCore & { readonly reload: Reload } => {
  const runtime = ManagedRuntime.make(usageLayerFor(live))
  let statistics: UsageStatistics["Service"]
  try {
    statistics = runtime.runSync(Effect.service(UsageStatistics))
  } catch (error) {
    live.close()
    throw error
  }
  const snapshot = Snapshot.over(live)
  const validation = Validation.make(snapshot, statistics, ValidationCounters.ignore)
  /** The library's contract: an unknown id throws `TargetGroupNotFound` / `OfferNotFound`. */
  const orThrow = <A>(answer: A | ValidationError): A => {
    if (answer instanceof ValidationError) throw answer.reason
    return answer
  }
  function validateMany(
    emails: ReadonlyArray<string>,
    target: string | { readonly targetGroupId: string }
  ): Array<ValidationResult>
  function validateMany(
    emails: ReadonlyArray<string>,
    target: { readonly offerId: string }
  ): Array<OfferValidationResult>
  function validateMany(emails: ReadonlyArray<string>, given: string | ValidationTarget) {
    const target = targetOf(given, "validateMany")
    if ("offerId" in target) return orThrow(validation.manyOffer(ALL_TEAMS, emails, target.offerId))
    return orThrow(validation.manyTargetGroup(ALL_TEAMS, emails, target.targetGroupId))
  }
  function validate(email: string, target: string | { readonly targetGroupId: string }): ValidationResult
  function validate(
    email: string,
    target: string | { readonly targetGroupId: string },
    options: { readonly explain: true }
  ): ExplainedValidationResult
  function validate(
    email: string,
    target: string | { readonly targetGroupId: string },
    options?: ValidateOptions
  ): ValidationResult | ExplainedValidationResult
  function validate(email: string, target: { readonly offerId: string }): OfferValidationResult
  function validate(email: string, given: string | ValidationTarget, options?: ValidateOptions) {
    const target = targetOf(given, "validate")
    if ("offerId" in target) {
      if (options?.explain === true) throw new TypeError("validate: explain is for a target group, not an offer.")
      return orThrow(validation.offer(ALL_TEAMS, email, target.offerId))
    }
    const { targetGroupId } = target
    if (options?.explain !== true) return orThrow(validation.targetGroup(ALL_TEAMS, email, targetGroupId))
    const { result, explanation } = orThrow(validation.explainTargetGroup(ALL_TEAMS, email, targetGroupId))
    return { ...result, explanation }
  }
  const institutions = makeInstitutions(() => live.current().engine.context)
  let verifications: ReturnType<typeof makeLibraryVerifications> | undefined
  const verificationsOf = () => {
    verifications ??= makeLibraryVerifications(live, validation, statistics, verification)
    return verifications
  }
  return {
    validate,
    validateOffer: (email, offerId) => orThrow(validation.offer(ALL_TEAMS, email, offerId)),
    validateMany,
    validateManyOffer: (emails, offerId) => orThrow(validation.manyOffer(ALL_TEAMS, emails, offerId)),
    inspect: (input) => institutions.inspect(input),
    searchInstitutions: (query) => institutions.search({ ...query, limit: query.limit ?? 20 }),
    institutionOf: (input) => institutions.institutionOf(input),
    usage: (offerId) => runtime.runPromise(statistics.usage(offerId)),
    current: () => live.current(),
    status: () => live.status(),
    get engine() {
      return live.current().engine
    },
    get verifications() {
      return verificationsOf().facade
    },
    close: async () => {
      live.close()
      await verifications?.dispose()
      await runtime.dispose()
    },
    reload
  }
}

/** Loads synchronously (the library's stores are files and memory); throws `InvalidConfiguration`. */
const loadOrThrow = (source: SnapshotSource, options: LiveSnapshotOptions): LiveSnapshot => {
  const live = LiveSnapshot.loadSync(source, options)
  if (live instanceof InvalidConfiguration) throw live
  return live
}

const directoryOptions = (options: OpenConfigOptions) =>
  [
    directorySource({ configDir: options.configDir, dataDir: options.dataDir, env: options.env }),
    { watch: options.watch, onReload: options.onReload, now: options.now }
  ] as const

/**
 * Loads the institution data and the target groups and offers (in memory,
 * or from a config directory). Rejects with `InvalidConfiguration`, every
 * problem with its path (and, for files, its line and column).
 */
export const createCampusgate = async (options: CampusgateOptions | OpenConfigOptions): Promise<Campusgate> => {
  const orReject = (outcome: ReloadOutcome) => {
    if (!outcome.ok) throw new InvalidConfiguration({ problems: outcome.problems })
  }
  if ("configDir" in options) {
    const live = loadOrThrow(...directoryOptions(options))
    await live.watching
    return facadeOver(live, async () => orReject(await Effect.runPromise(live.reload())), options.verification)
  }
  const source = resourcesSource(options, options.datasets)
  const live = loadOrThrow(source, { now: options.now, builtInInstitutions: options.builtInInstitutions })
  return facadeOver(
    live,
    async (resources?: Parameters<Campusgate["reload"]>[0]) => {
      if (resources === undefined) return
      orReject(live.apply(configFromResources(resources, options.datasets)))
      source.replace(resources)
    },
    options.verification
  )
}

/**
 * @deprecated Use `createCampusgate({ configDir, watch })`. Loads a config
 * directory synchronously; throws `InvalidConfiguration` (every problem with
 * file, line and field) if it is not valid.
 */
export const openConfig = (options: OpenConfigOptions): ConfiguredCampusgate => {
  const live = loadOrThrow(...directoryOptions(options))
  return facadeOver(live, () => Effect.runSync(live.reload()))
}
