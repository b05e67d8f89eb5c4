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
  /** `domain` for hosts of another role (`staff.x.edu`), one frozen object per role fact, by its index; made on first need. */
  withRole: Array<DomainDetail | undefined> | null
}
