/**
 * A target group's verdict on a matched institution (`judgeInstitution.ts`),
 * kept by the compiled group (`compileTargetGroup.ts`): a module of its own,
 * so that the two do not import each other.
 */
import type { ReasonCode } from "../../domain/ReasonCode.ts"
import type { DomainDetail, GeographyDetail, OrganizationTypeDetail } from "../../domain/ValidationResult.ts"
import type { RoleFact } from "./hostRole.ts"

export interface InstitutionVerdict {
  readonly domain: DomainDetail
  readonly organizationType: OrganizationTypeDetail
  readonly geography: GeographyDetail
  /** The abuse policy rejected it: the email-policy detail fails too. */
  readonly abusedRejected: boolean
  /** Set when a filter rejected it; kept flat (no tuple) since the per-email path reads them. */
  readonly reasonCode: ReasonCode | undefined
  readonly reason: string | undefined
  /**
   * The role of a host equal to the matched domain, which `domain` reports: by the listed entry's role
   * (mixed under a suffix rule), which `role.role` is, and against which a host below it is judged.
   */
  readonly role: RoleFact
  /** The group does not accept `role`. */
  readonly roleRefused: boolean
  /**
   * `domain` for hosts whose labels name another role (`stu.x.edu`, `staff.x.edu`), per role, made on first
   * need: fields of the verdict, not an array beside it, so that such a host reads nothing more than the
   * verdict (`domainWithRole`).
   */
  studentHost: DomainDetail | null
  staffHost: DomainDetail | null
  alumniHost: DomainDetail | null
}
