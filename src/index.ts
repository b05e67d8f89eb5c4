/**
 * Campusgate as a library. Two ways in:
 * - everyone awaits `createCampusgate(...)` once — with target groups and
 *   offers in memory, or with a config directory (the same YAML files the
 *   daemon serves, optionally watched) — and calls its plain, synchronous
 *   methods: the engine needs no I/O per email;
 * - Effect users compose the application core's services: `Snapshot`
 *   (`Snapshot.layerFrom(resourcesSource(...) | directorySource(...))`),
 *   `Validation.layer`, `UsageStatistics` and `ValidationCounters`.
 * Offer validations are counted in the offer's usage statistics
 * (`usage(offerId)`); with a config directory they persist in its data
 * directory. `openConfig` is a deprecated alias for a config directory.
 * `verifications` proves that a person controls an eligible address;
 * `verifyEligibilityToken` (also alone in `campusgate/token`) checks the
 * signed token a verification yields, in a shop's backend.
 */
export * from "./app/Snapshot.ts"
export * from "./app/sources.ts"
export { Validation, ValidationCounters, ValidationError, type ValidationService } from "./app/Validation.ts"
export type { ConfigLocation, LoadedConfig } from "./config/loadConfig.ts"
export { loadConfig } from "./config/loadConfig.ts"
export * from "./domain/Explanation.ts"
export * from "./domain/errors.ts"
export * from "./domain/Institution.ts"
export * from "./domain/InstitutionMatch.ts"
export * from "./domain/NonInstitution.ts"
export * from "./domain/Offer.ts"
export { DailyUsage, emptyOfferUsage, OfferUsage, UniqueEmails } from "./domain/OfferUsage.ts"
export * from "./domain/ReasonCode.ts"
export * from "./domain/TargetGroup.ts"
export * from "./domain/ValidationResult.ts"
export { VerificationStatus, VerificationView } from "./domain/Verification.ts"
export { VerificationPolicy } from "./domain/VerificationPolicy.ts"
export { ALL_TEAMS, type Viewer } from "./domain/visibility.ts"
export { EmailPolicyLists } from "./engine/EmailPolicyLists.ts"
export { Engine } from "./engine/Engine.ts"
export { canonicalAddress } from "./engine/email/canonical.ts"
export {
  type DomainParse,
  type EmailParse,
  type EmailSyntaxOptions,
  type ParsedEmail,
  parseDomain,
  parseEmail
} from "./engine/email/parseEmail.ts"
export { InstitutionIndex, type InstitutionIndexOptions } from "./engine/InstitutionIndex.ts"
export type { InspectInstitution, InspectResult } from "./engine/inspect.ts"
export type { InstitutionPage, InstitutionQuery } from "./engine/institutions/InstitutionSearch.ts"
export type { HostMatch, InstitutionTable } from "./engine/institutions/InstitutionTable.ts"
export { DatasetError, type DatasetFormat, type DatasetSpec } from "./engine/institutions/userDatasets.ts"
export {
  type Campusgate,
  type CampusgateOptions,
  type ConfiguredCampusgate,
  createCampusgate,
  type InstitutionSearchQuery,
  type OpenConfigOptions,
  openConfig,
  type ValidateOptions,
  type ValidationTarget
} from "./library.ts"
export type { LibraryVerificationOptions, VerificationsFacade } from "./libraryVerifications.ts"
export { UsageStatistics, type UsageStatisticsOptions } from "./stats/UsageStatistics.ts"
export { UsageStore, UsageStoreError } from "./stats/UsageStore.ts"
export {
  type EligibilityAudience,
  type EligibilityClaims,
  EligibilityTokenError,
  type EligibilityTokenProblem,
  eligibilityAudience,
  type VerifyEligibilityOptions,
  verifyEligibilityToken
} from "./verification/eligibilityToken.ts"
export type { OutgoingMail } from "./verification/MailTransport.ts"
export {
  type LinkOutcome,
  type StartOutcome,
  type StartVerification,
  Verifications
} from "./verification/Verifications.ts"
export * from "./verification/VerificationsError.ts"
