/**
 * Email policy flags beyond the institution match: disposable domains, free
 * mail providers, role accounts (`EmailLists`), look-alike internationalised
 * domains (`assessConfusable`) and "did you mean" for mistyped domains
 * (`suggestDomain`). All synchronous and free of Effect, for the hot path.
 */
export { assessConfusable, type ConfusableAssessment, skeleton } from "./confusable.ts"
export { DomainList } from "./DomainList.ts"
export {
  type EmailListCounts,
  type EmailListSources,
  EmailLists,
  loadBuiltInEmailLists,
  loadEmailLists
} from "./EmailLists.ts"
export {
  asEmailListsData,
  type EmailListData,
  type EmailListName,
  type EmailListReport,
  type EmailListSource,
  type EmailListsData,
  emailListNames,
  emailListsDataFormat,
  listEntries
} from "./EmailListsData.ts"
export { damerauDistance } from "./editDistance.ts"
export { KnownDomains } from "./KnownDomains.ts"
export { RoleAccounts } from "./RoleAccounts.ts"
export { commonSuffixes } from "./suffixSuggestion.ts"
export { type IsKnownDomain, suggestDomain } from "./typo.ts"
