/**
 * Academic zones: registry suffixes under which only educational or
 * research organisations may register (`edu`, `ac.uk`, `edu.cn`,
 * `k12.ca.us`). A host under one is academic by its suffix alone, with
 * lower confidence than a listed domain, and the zone's registry policy is
 * what the match knows about the institution: its country (`ac.XX`,
 * `edu.XX`, the `.us` locality zones) and, only where the policy admits a
 * single kind of institution, its type. Where a zone mixes schools,
 * universities and research bodies the type stays unknown (`other`).
 *
 * Each policy names its source, and docs/institution-data.md lists them. The registries'
 * own wording is summarised, not quoted.
 */
import type { InstitutionType } from "../../domain/Institution.ts"

export interface ZonePolicy {
  /** The registry suffix, e.g. `edu`, `ac.kr`, `k12.ca.us`. */
  readonly suffix: string
  /** ISO 3166-1 alpha-2, or null where the zone is not national. */
  readonly country: string | null
  /** ISO 3166-2 where the zone is a subdivision's (`k12.ca.us` → `US-CA`). */
  readonly region: string | null
  /** The one type the policy admits, or `other` when it admits several or does not say. */
  readonly type: InstitutionType
  /** Whether `type` is the policy's (true) or unknown (false). */
  readonly typeKnown: boolean
  /** Who may register, in a few words. */
  readonly policy: string
  /** Where the policy is published. */
  readonly reference: string
}

/** US states, the district and the territories with RFC 1480 locality zones. */
export const usStates = [
  ...["ak", "al", "ar", "az", "ca", "co", "ct", "dc", "de", "fl", "ga", "hi", "ia", "id", "il", "in", "ks", "ky"],
  ...["la", "ma", "md", "me", "mi", "mn", "mo", "ms", "mt", "nc", "nd", "ne", "nh", "nj", "nm", "nv", "ny", "oh"],
  ...["ok", "or", "pa", "ri", "sc", "sd", "tn", "tx", "ut", "va", "vt", "wa", "wi", "wv", "wy"],
  ...["as", "gu", "mp", "pr", "vi"]
] as const

const rfc1480 = "RFC 1480, section 1 (the .us locality zones)"

const policy = (
  suffix: string,
  country: string | null,
  type: InstitutionType | null,
  text: string,
  reference: string,
  region: string | null = null
): ZonePolicy => ({
  suffix,
  country,
  region,
  type: type ?? "other",
  typeKnown: type !== null,
  policy: text,
  reference
})

/** Zones whose registry policy this project has read; other `ac.XX` / `edu.XX` zones get `generalZonePolicy`. */
export const documentedZones: ReadonlyArray<ZonePolicy> = [
  policy(
    "edu",
    "US",
    "college",
    "US post-secondary institutions accredited by an agency the US Department of Education recognises (since 2001; older registrations kept, some abroad): a university or college",
    "EDUCAUSE, .edu eligibility policy, https://net.educause.edu/eligibility.htm"
  ),
  policy(
    "ac.uk",
    "GB",
    null,
    "UK higher and further education institutions, research councils and sector bodies",
    "Jisc, ac.uk and gov.uk domain name eligibility policy, https://www.jisc.ac.uk/domain-registry"
  ),
  policy("sch.uk", "GB", "school", "UK schools", "Jisc, sch.uk domain names, https://www.jisc.ac.uk/domain-registry"),
  policy(
    "ac.jp",
    "JP",
    null,
    "Japanese universities, junior colleges, colleges of technology and inter-university research institutes",
    "JPRS, attribute-type JP domain names, https://jprs.co.jp/en/jpdomain.html"
  ),
  policy(
    "ed.jp",
    "JP",
    "school",
    "Japanese primary and secondary schools, kindergartens and similar",
    "JPRS, attribute-type JP domain names, https://jprs.co.jp/en/jpdomain.html"
  ),
  policy(
    "ac.kr",
    "KR",
    "college",
    "Korean higher-education institutions: universities, colleges and graduate schools",
    "KISA (KRNIC), .kr second-level domains"
  ),
  ...["es", "ms", "hs", "sc", "kg"].map((zone) =>
    policy(
      `${zone}.kr`,
      "KR",
      "school",
      "Korean schools (elementary, middle, high, other schools, kindergartens)",
      "KISA (KRNIC), .kr second-level domains"
    )
  ),
  policy(
    "edu.au",
    "AU",
    null,
    "Australian schools, universities, TAFEs and other education bodies",
    "auDA, edu.au eligibility, https://www.auda.org.au/"
  ),
  policy(
    "ac.nz",
    "NZ",
    null,
    "New Zealand tertiary education institutions and related organisations",
    "InternetNZ, .nz second-level domains, https://internetnz.nz/"
  ),
  policy(
    "school.nz",
    "NZ",
    "school",
    "New Zealand primary and secondary schools",
    "InternetNZ, .nz second-level domains"
  ),
  policy("school.za", "ZA", "school", "South African schools", "ZADNA, .za second-level domains"),
  policy(
    "ac.za",
    "ZA",
    null,
    "South African higher-education and research institutions",
    "ZADNA, .za second-level domains, https://www.zadna.org.za/"
  ),
  policy(
    "edu.cn",
    "CN",
    null,
    "Chinese schools, universities and research institutions (CERNET)",
    "CERNET, EDU.CN domain registration rules"
  ),
  policy(
    "ac.in",
    "IN",
    null,
    "Indian academic and research institutions",
    "ERNET India, ac.in / edu.in registration, https://www.registry.ernet.in/"
  ),
  policy(
    "edu.in",
    "IN",
    null,
    "Indian educational institutions",
    "ERNET India, ac.in / edu.in registration, https://www.registry.ernet.in/"
  ),
  policy(
    "res.in",
    "IN",
    "research",
    "Indian research institutions",
    "ERNET India, res.in registration, https://www.registry.ernet.in/"
  ),
  policy("k12.tr", "TR", "school", "Turkish primary and secondary schools", "TRABIS, .tr second-level domains"),
  policy("k12.il", "IL", "school", "Israeli schools", "ISOC-IL, .il second-level domains"),
  ...usStates.flatMap((state) => {
    const region = `US-${state.toUpperCase()}`
    return [
      policy(`k12.${state}.us`, "US", "school", "public school districts and schools", rfc1480, region),
      policy(`pvt.k12.${state}.us`, "US", "school", "private schools", rfc1480, region),
      policy(`cc.${state}.us`, "US", "college", "community colleges", rfc1480, region),
      policy(`tec.${state}.us`, "US", "college", "technical and vocational schools", rfc1480, region)
    ]
  })
]

/** School zones in other countries (`sch.id`, `sch.ae`, `g12.br`) are schools whatever the registry's wording. */
const schoolZone = /^(?:k12|sch|school|g12)\./

/** The policy of an academic zone not in `documentedZones`: its country, and a type only for school zones. */
export const generalZonePolicy = (suffix: string, country: string | null): ZonePolicy =>
  schoolZone.test(suffix)
    ? policy(suffix, country, "school", "schools", "the zone's name (a school zone)")
    : policy(
        suffix,
        country,
        null,
        "educational and research institutions",
        suffix.startsWith("ac.") || suffix.startsWith("edu.")
          ? "the public suffix list (an academic second-level zone)"
          : "JetBrains swot, tlds.txt"
      )
