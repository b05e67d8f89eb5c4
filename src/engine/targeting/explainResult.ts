/**
 * A validation result in words, criterion by criterion (`domain/Explanation.ts`),
 * for the console's "try an email". Built from the result's own
 * `validationDetails` (what was judged), the compiled group (which criteria
 * it uses, so a criterion that was not reached is told apart from one the
 * group does not have) and `inspectInput`'s facts (the institution found,
 * whatever the group asks). A failed criterion's sentence is the result's
 * `reason`: the engine stops at the first failure, and where two criteria
 * fail together (an abused domain: domain and email policy; a host on no
 * list: domain and lists) the reason speaks of both. Off the hot path: run
 * only when asked.
 */
import type { CriterionExplanation, ExplainedCriterion, Explanation } from "../../domain/Explanation.ts"
import type { CheckStatus, EmailPolicyFlags, ValidationResult } from "../../domain/ValidationResult.ts"
import { capitalized, withArticle } from "../../domain/words.ts"
import { inspectInput } from "../inspect.ts"
import { type CompiledTargetGroup, rolePhrases } from "./compileTargetGroup.ts"
import type { EngineContext } from "./EngineContext.ts"

const outcomes: Readonly<Record<CheckStatus, CriterionExplanation["outcome"]>> = {
  passed: "pass",
  failed: "fail",
  skipped: "not-applicable"
}

const NOT_REACHED = "Not checked: an earlier criterion decided."

const flagPhrases: Readonly<Record<keyof EmailPolicyFlags, string>> = {
  disposable: "a disposable address",
  freeMail: "free mail",
  roleAccount: "a role account",
  confusable: "using look-alike characters",
  abused: "a domain known to give addresses to people who are not students"
}

const listed = (values: ReadonlyArray<string> | undefined): string => (values ?? []).join(", ")

/** The sentences of the criteria that passed or do not apply, by criterion. */
const passedOrUnused = (
  group: CompiledTargetGroup,
  result: ValidationResult
): Readonly<Record<ExplainedCriterion, () => string>> => {
  const details = result.validationDetails
  const institutions = group.institutions
  return {
    format: () =>
      details.format.status === "passed"
        ? `A well-formed address: ${details.format.normalized ?? result.email}.`
        : NOT_REACHED,
    domain: () => {
      const domain = details.domain
      if (domain.status === "passed") {
        const name = domain.institution?.name ?? `the institution at ${domain.matchedDomain}`
        const how = domain.rule === "listed-domain" ? "a listed domain" : "an academic suffix rule"
        const serves = domain.role === undefined ? "" : `, serving ${rolePhrases[domain.role]}`
        return `${domain.matchedDomain} is ${name} (${how})${serves}.`
      }
      if (institutions === null) return "The target group does not ask for an academic institution."
      return details.customList.status === "passed" && details.customList.list === "domains.allow"
        ? "Decided by the target group's own domain list."
        : NOT_REACHED
    },
    geography: () => {
      const geography = details.geography
      if (geography.status === "passed") {
        const allowed = [...(geography.allowedCountries ?? []), ...(geography.allowedRegions ?? [])]
        const place = [geography.country, geography.region].filter((part) => part != null).join(", ")
        return `${place} is among those accepted (${allowed.join(", ")}).`
      }
      if (institutions === null || (institutions.countries === null && institutions.regions === null)) {
        return "The target group accepts any country and region."
      }
      return NOT_REACHED
    },
    organisationType: () => {
      const type = details.organizationType
      if (type.status === "passed")
        return `${capitalized(withArticle(type.type ?? "institution"))} is among the types accepted (${listed(type.allowedTypes)}).`
      if (institutions === null || institutions.types === null) {
        return "The target group accepts any type of institution."
      }
      return NOT_REACHED
    },
    customList: () => {
      const custom = details.customList
      if (custom.status === "passed") {
        return custom.entry === undefined
          ? "On none of the target group's deny lists."
          : `Allowed by the target group's ${custom.list} entry "${custom.entry}".`
      }
      return group.hasCustomLists ? NOT_REACHED : "The target group has no domain lists or patterns."
    },
    emailPolicy: () => {
      const policy = details.emailPolicy
      if (policy.status === "passed") {
        const flags = Object.entries(policy.flags ?? {})
          .filter(([, set]) => set)
          .map(([flag]) => flagPhrases[flag as keyof EmailPolicyFlags])
        return flags.length === 0
          ? "Not disposable, not a role account, no look-alike characters."
          : `Flagged as ${flags.join(", ")}, which this target group accepts.`
      }
      return NOT_REACHED
    }
  }
}

const detailKeys: Readonly<Record<ExplainedCriterion, keyof ValidationResult["validationDetails"]>> = {
  format: "format",
  domain: "domain",
  geography: "geography",
  organisationType: "organizationType",
  customList: "customList",
  emailPolicy: "emailPolicy"
}

/** `result` (of `group`, for its `email`) explained per criterion, with what is known of the host. */
export const explainResult = (
  group: CompiledTargetGroup,
  context: EngineContext,
  result: ValidationResult
): Explanation => {
  const sentences = passedOrUnused(group, result)
  const criteria = (Object.keys(detailKeys) as Array<ExplainedCriterion>).map((criterion) => {
    const status = result.validationDetails[detailKeys[criterion]].status
    const detail = status === "failed" ? (result.reason ?? "Failed.") : sentences[criterion]()
    return { criterion, outcome: outcomes[status], detail }
  })
  const facts = inspectInput(context, result.email)
  const found = facts.institution
  return {
    criteria,
    institution:
      found === null
        ? null
        : {
            id: found.id,
            name: found.name,
            country: found.country,
            region: found.region,
            type: found.type,
            matchedDomain: found.matchedDomain,
            rule: found.rule,
            role: found.role,
            ror: found.ror
          },
    organization: facts.organization
  }
}
