/**
 * Organisations inside academic zones, or listed by an academic dataset,
 * that are not educational institutions: their staff are not students or
 * educators, so they are refused with a reason code saying which kind they
 * are.
 */
import * as Schema from "effect/Schema"
import type { ReasonCode } from "./ReasonCode.ts"

export const NonInstitutionKind = Schema.Literals(["research-network", "sector-body", "government", "platform"])
export type NonInstitutionKind = typeof NonInstitutionKind.Type

/** The reason code a validation fails with for each kind. */
export const nonInstitutionReason: Readonly<Record<NonInstitutionKind, ReasonCode>> = {
  "research-network": "RESEARCH_NETWORK",
  "sector-body": "SECTOR_BODY",
  government: "GOVERNMENT_BODY",
  platform: "PLATFORM"
}

/** How each kind reads in a sentence. */
export const nonInstitutionPhrase: Readonly<Record<NonInstitutionKind, string>> = {
  "research-network": "a research and education network",
  "sector-body": "a sector body (an association, council, agency or funder)",
  government: "a government body",
  platform: "a company or online platform"
}
