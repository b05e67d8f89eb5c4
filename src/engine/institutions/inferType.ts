/**
 * Infers the kind of organisation from an institution's name (and, for
 * schools, its domain), in the main languages of the open datasets, which
 * carry no type of their own. Families are checked from the most to the
 * least specific; the first that matches wins. Unknown stays `other`.
 */
import type { InstitutionType } from "../../domain/Institution.ts"

const university =
  /(universi|vishwavidyalay|विश्वविद्यालय|vysoká škola|vysoké učení|universidad|universidade|université|università|universiteit|uniwersytet|üniversite|univerzit|egyetem|yliopisto|háskóli|politecnic|politécnic|polytechnique|institute of technology|technische hochschule|技术大学|大学|大學|대학교|đại học|มหาวิทยาลัย|университет|універс|جامعة|دانشگاه|אוניברסיט)/iu

/** Secondary and primary schools; the look-behinds keep `Hochschule`, `högskola` and `vysoká škola` out. */
const school =
  /((?<!hoch|fach|kunst|musik)schulen?\b|школ|madras|中学|中學|学校|coláiste|โรงเรียน|\bhs\b|gymnasium|gymnázium|gimnazjum|gimnazija|gimnázium|lyceum|liceum|liceo|lycée|\blukio\b|vidusskola|(?<!vysoká |vysoké )škol[ay]\b|(?<!hög|yrkeshög)skola\b|szkoł|szkół|\bies\b|\bsma[kn]?\b|\bsmk[n]?\b|\bsmp[n]?\b|istituto (comprensivo|tecnico|professionale|d['’]istruzione|di istruzione)|\biiss?\b|\bitis?\b|colegiul|osnovna|srednja|střední|stredná|trung học|high school|secondary|middle school|primary|elementary|montessori|\bkoleji\b|school district|public schools|\bk-?12\b|escola (básica|secundária|estadual|municipal)|escuela (secundaria|primaria)|collège (?!universitaire))/iu

const research =
  /\b(research|laborat|observator|forschung|recherche|investigaci|научн|cnrs|max planck|fraunhofer|helmholtz|national institute of)\w*/iu

const college =
  /(college|colegio|collège|cégep|fachhochschule|hochschule|hogeschool|högskola|høgskole|conservato|seminar|academy|akademi|academia|académie|academie|accademia|tecnol[óo]gic[ao]|sekolah tinggi|\b(?:stmik|stie|stikes|stkip|stt|stai)\b|escola|escuela|école|ecole|faculdade|facultad|fakultet|академ|uczelnia|højskole|tehnikum|politeknik|polytechnic|tecnológico|technikum|institut|insitut|school|faculty|kolleg|学院|학교)/iu

const families: ReadonlyArray<readonly [InstitutionType, RegExp]> = [
  ["university", university],
  ["school", school],
  ["research", research],
  ["college", college]
]

/** Academic registry zones that only schools use (`k12.ca.us`, `sch.id`, `school.za`, `hs.kr`). */
const schoolZone = /(^|\.)(k12|sch|school|es|ms|hs)\.[a-z.]+$/

export const inferInstitutionType = (name: string | null, domains: ReadonlyArray<string> = []): InstitutionType => {
  if (name !== null) for (const [type, pattern] of families) if (pattern.test(name)) return type
  return domains.some((domain) => schoolZone.test(domain) && !/\.(edu|ac)\./.test(domain)) ? "school" : "other"
}

/** The type an academic suffix rule implies: schools for school zones, else unknown. */
export const suffixRuleType = (suffix: string): InstitutionType => (schoolZone.test(`x.${suffix}`) ? "school" : "other")
