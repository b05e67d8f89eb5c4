/**
 * Small, hand-made institution data and email lists for unit tests, built
 * through the same code paths as the real data so tests exercise them.
 */
import { InvalidConfiguration } from "../src/domain/errors.ts"
import type { ReviewedInstitution } from "../src/domain/InstitutionReview.ts"
import type { Engine } from "../src/engine/Engine.ts"
import { IndexBuilder } from "../src/engine/institutions/IndexBuilder.ts"
import { InstitutionTable } from "../src/engine/institutions/InstitutionTable.ts"
import { makeEngine } from "../src/engine/makeEngine.ts"
import { type EmailLists, loadEmailLists } from "../src/engine/policy/EmailLists.ts"
import { type EmailListName, type EmailListsData, emailListsDataFormat } from "../src/engine/policy/EmailListsData.ts"
import { type EngineContext, makeEngineContext } from "../src/engine/targeting/EngineContext.ts"

const source = { dataset: "fixture", version: "1" }

export const fixtureBuilder = (): IndexBuilder => {
  const builder = new IndexBuilder()
  builder.addSuffixRule("edu", "US", "college", source)
  builder.addSuffixRule("ac.uk", "GB", "other", source)
  builder.addSuffixRule("edu.cn", "CN", "other", source)
  builder.addSuffixRule("k12.ca.us", "US", "school", source)
  builder.addInstitution({ name: "Massachusetts Institute of Technology", domains: ["mit.edu"], country: "US" }, source)
  builder.addInstitution({ name: "University of Oxford", domains: ["ox.ac.uk"] }, source)
  builder.addInstitution({ name: "Example University", domains: ["x.edu.cn"] }, source)
  builder.addInstitution({ name: "Example University Students", domains: ["stu.y.edu.cn"] }, source)
  builder.addInstitution({ name: "Technische Universität München", domains: ["tum.de"], region: "DE-BY" }, source)
  builder.addInstitution({ name: "Springfield High School", domains: ["springfield-high.org"], country: "US" }, source)
  builder.addInstitution({ name: "Middlesex University", domains: ["mdx.ac"], country: "GB" }, source)
  builder.addInstitution({ name: "Universidad de Ejemplo", domains: ["umb.edu.co"] }, source)
  builder.addDeny("y.edu.cn", source)
  builder.addDeny("staff.mit.edu", source)
  builder.addAbused("mdx.ac", source)
  builder.addAbused("academia.umb.edu.co", source)
  builder.addNonInstitution("net.ac.uk", "research-network", "A research network", "GB", source, "curated")
  builder.addNonInstitution("council.ac.uk", "sector-body", "A council", "GB", source, "curated")
  builder.addNonInstitution("ministry.edu.cn", "government", "A ministry", "CN", source, "curated")
  builder.addNonInstitution("platform.edu", "platform", "A platform", "US", source, "curated")
  return builder
}

export const fixtureTable = (): InstitutionTable => InstitutionTable.fromData(fixtureBuilder().finish())

const list = (name: EmailListName, entries: ReadonlyArray<string>) => ({
  source: { package: "fixture", version: "1", file: name },
  report: { read: entries.length, kept: entries.length, duplicate: 0, invalid: 0, publicSuffix: 0 },
  entries: [...entries].sort().join("\n")
})

export const fixtureListsData = (): EmailListsData => ({
  format: emailListsDataFormat,
  lists: {
    disposable: list("disposable", ["mailinator.com", "10minutemail.com"]),
    disposableWildcard: list("disposableWildcard", ["33mail.com"]),
    freeMail: list("freeMail", ["gmail.com", "yahoo.com", "mailinator.com", "umb.edu.co"]),
    commonMailProviders: list("commonMailProviders", ["gmail.com", "yahoo.com"]),
    roleAccounts: list("roleAccounts", ["admin", "info", "noreply", "no-reply", "support"])
  }
})

export const fixtureLists = (): EmailLists => loadEmailLists(fixtureListsData())

export const fixtureContext = (): EngineContext => makeEngineContext(fixtureTable(), fixtureLists())

/**
 * An engine on the fixture data with two target groups — every institution
 * (`all`), and UK institutions or partner.com (`uk`) — and an active offer
 * `o` of team acme on both.
 */
export const fixtureEngine = (): Engine => {
  const made = makeEngine(fixtureContext(), {
    targetGroups: [
      { id: "all", name: "All institutions", criteria: { institutions: {} } },
      { id: "uk", name: "UK", criteria: { institutions: { countries: ["GB"] }, domains: { allow: ["partner.com"] } } }
    ],
    offers: [{ id: "o", team: "acme", name: "Offer", status: "active", targetGroups: ["all", "uk"] }]
  })
  if (made instanceof InvalidConfiguration) throw made
  return made
}

/** An institution team acme's operator approved from the review queue (`engine/targeting/ReviewedHosts.ts`). */
export const reviewedFixture = {
  domain: "newschool-sampleburg.de",
  team: "acme",
  name: "Neue Schule Sampleburg",
  type: "college",
  country: "DE",
  region: null,
  approvedBy: "key_reviewer01",
  approvedAt: "2026-11-29T02:00:00.000Z"
} as ReviewedInstitution

/** `team`'s approval of `domain` as a university in Germany named `name`, by `reviewedFixture`'s reviewer. */
export const universityApproval = (
  team: string,
  domain: string,
  name: string,
  approvedAt: string = reviewedFixture.approvedAt
): ReviewedInstitution =>
  ({ ...reviewedFixture, domain, team, name, type: "university", approvedAt }) as ReviewedInstitution
