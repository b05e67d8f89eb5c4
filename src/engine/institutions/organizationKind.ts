/**
 * Tells organisations that are not educational institutions — research
 * and education networks, sector bodies, government bodies, platforms —
 * from institutions, for the organisations the registry (ROR) does not type
 * as education. Many educational institutions are typed otherwise there
 * (Brazil's federal institutes as government, US private colleges as
 * nonprofit, university hospitals as healthcare), so the registry's type
 * alone is not enough: a name that says what kind of body it is comes
 * first (a network, a ministry, a commission or council), then a name that
 * says it teaches or researches (university, college, school, institute,
 * laboratory, in the main languages of the data), then the registry type.
 */
import type { InstitutionType } from "../../domain/Institution.ts"
import type { NonInstitutionKind } from "../../domain/NonInstitution.ts"
import { inferInstitutionType } from "./inferType.ts"
import type { RorType } from "./sources/SourceSnapshot.ts"

const network =
  /\b(networks?|netz|netzwerk|forschungsnetz|réseau|reseau|nren|internet2|backbone)\b|\brede nacional\b|\bred (académica|academica|nacional|universitaria|de investigación|clara)\b/iu

/** Names of public administrations: never an institution's. */
const government =
  /\b(ministry|ministries|ministerio|ministère|ministere|ministerium|ministero|ministério|ministerstvo|department of|departamento de|département|secretaria|secretaría|secrétariat|government|gobierno|governo|gouvernement|regierung|senatsverwaltung|municipality|municipalidad|prefeitura|city of|county of|parliament|embassy|regulator|regulatory|inspectorate|ombudsman)\b/iu

/** Armed forces and police: government, unless the name says it teaches (a military academy). */
const forces = /\b(armed forces|air force|navy|army|marine corps|military|defen[cs]e|police|polizei)\b/iu

/** Names of bodies that serve a sector: even "University Grants Commission" is not a university. */
const sectorBody =
  /\b(commission|comisión|comissão|commissione|council|conselho|consejo|conseil|association|associação|asociación|verband|federation|federación|consortium|consorcio|alliance|agency|agencia|agência|agence|authority|board|accreditation|acreditación|quality assurance|grants)\b/iu

/**
 * Why an organisation is not an institution, from its registry names and
 * types; undefined when it is one. `otherNames` (what another dataset
 * calls the same domain) may show it teaches, never what body it is.
 */
export const nonInstitutionKind = (
  names: ReadonlyArray<string>,
  types: ReadonlyArray<RorType>,
  otherNames: ReadonlyArray<string | null> = []
): NonInstitutionKind | undefined => {
  if (types.includes("education")) return undefined
  const all = names.join(" | ")
  if (network.test(all)) return "research-network"
  if (types.includes("facility") || types.includes("healthcare") || types.includes("archive")) {
    return undefined
  }
  if (government.test(all)) return "government"
  if (sectorBody.test(all)) return types.includes("government") ? "government" : "sector-body"
  if (institutionTypeOfNames([...names, ...otherNames]) !== "other") return undefined
  if (forces.test(all) || types.includes("government")) return "government"
  if (types.includes("company")) return "platform"
  return "sector-body"
}

/** The type the names say, the first name that says one winning. */
export const institutionTypeOfNames = (names: ReadonlyArray<string | null>): InstitutionType => {
  for (const name of names) {
    const type = inferInstitutionType(name)
    if (type !== "other") return type
  }
  return "other"
}
