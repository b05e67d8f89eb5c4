/**
 * What a domain's own labels say, in words: the academic and commercial
 * word families found in them (in many languages and scripts), the kind
 * of top-level domain, and the label's shape. One lexicon for the two
 * readers of a label: the type inferred for an institution matched by its
 * zone alone (`typeInference.ts`: `college` in `trinitycollegebristol.ac.uk`)
 * and the likelihood that an unknown domain is an institution
 * (`candidates.ts`). How much each family says is not written here: both
 * measure it on the bundled data.
 *
 * A family matches a label when one of its stems occurs in it (`univ` in
 * `unisabana`? no: `uni` only as the label's start or after a hyphen), or
 * is the whole label or a hyphen-separated part of it for short stems that
 * occur inside unrelated words (`fh`, `iit`).
 */
import { decodePunycode } from "../email/punycode.ts"

export type WordFamily =
  | "university"
  | "college"
  | "polytechnic"
  | "institute"
  | "academy"
  | "school"
  | "k12"
  | "arts"
  | "medicine"
  | "science"
  | "research"
  | "education"
  | "seminary"
  | "hospital"
  | "government"
  | "commerce"
  | "media"
  | "technology"

interface Stems {
  /** Found anywhere in a label. */
  readonly anywhere?: ReadonlyArray<string>
  /** Found at the start of a label or of one of its hyphenated parts. */
  readonly start?: ReadonlyArray<string>
  /** Only a whole label or a whole hyphenated part. */
  readonly whole?: ReadonlyArray<string>
}

/** The stems of each family, lower-case; Unicode ones match a decoded `xn--` label. */
const lexicon: Record<WordFamily, Stems> = {
  university: {
    anywhere: [
      "universi",
      "univerz",
      "uniwersytet",
      "egyetem",
      "yliopisto",
      "daigaku",
      "daxue",
      "vishwavidyalay",
      "vidyapeeth",
      "vidyapith",
      "haskoli",
      "ulkopist",
      "universidad",
      "universidade",
      "universite",
      "universita",
      "universiteit",
      "universitet",
      "universitas",
      "unibz",
      "大学",
      "大學",
      "대학교",
      "университет",
      "універс",
      "جامعة",
      "دانشگاه",
      "มหาวิทยาลัย"
    ],
    start: ["univ", "uni"]
  },
  college: {
    anywhere: [
      "college",
      "colegio",
      "coleg",
      "kolej",
      "kollegium",
      "cegep",
      "hochschule",
      "hogeschool",
      "hogskol",
      "hoegskol",
      "hoyskol",
      "fachhochschule",
      "学院",
      "대학"
    ],
    start: ["fh"],
    whole: ["fhs", "hfg", "hfk", "hfm", "hfmt", "hbk", "ph", "hs"]
  },
  polytechnic: {
    anywhere: ["polytechn", "politecn", "politeknik", "polytech", "polimi", "politehn"],
    whole: ["tu", "th", "poly"]
  },
  institute: {
    anywhere: ["institut", "instituto", "istituto"],
    whole: ["iit", "nit", "iiit", "iim", "iis", "iisc", "iiser", "mit", "inst"]
  },
  academy: { anywhere: ["academ", "akadem", "accadem", "академ"] },
  school: {
    anywhere: [
      "school",
      "schule",
      "ecole",
      "escola",
      "escuela",
      "lycee",
      "liceo",
      "liceu",
      "gymnas",
      "gimnaz",
      "skola",
      "szkola",
      "школ",
      "学校",
      "학교"
    ]
  },
  k12: { anywhere: ["k12", "schooldistrict", "isd"], whole: ["usd", "csd", "sd"] },
  arts: {
    anywhere: ["music", "musik", "musica", "conserv", "kunst", "theat", "theater", "design", "dance", "film", "arts"]
  },
  medicine: { anywhere: ["medic", "nursing", "pharma", "dental", "veterin", "medizin"], start: ["med"] },
  science: { anywhere: ["scien", "wissenschaft", "ciencia", "scienz", "sciences"], start: ["sci"] },
  research: { anywhere: ["research", "forschung", "recherche", "laborator", "observator"] },
  education: {
    anywhere: [
      "educa",
      "edu",
      "campus",
      "student",
      "alumni",
      "studi",
      "study",
      "learn",
      "teach",
      "pedagog",
      "paedagog",
      "bildung"
    ]
  },
  seminary: { anywhere: ["seminar", "theolog", "divinity", "bible", "yeshiva", "madras"] },
  hospital: { anywhere: ["hospital", "klinik", "clinic", "klinikum", "spital", "health", "sante", "salud"] },
  government: {
    anywhere: ["gouv", "govern", "ministry", "minister", "ministerio", "council", "federal", "bundes"],
    start: ["gov"]
  },
  commerce: {
    anywhere: [
      "shop",
      "store",
      "market",
      "bank",
      "casino",
      "poker",
      "loan",
      "insur",
      "deal",
      "sale",
      "buy",
      "pay",
      "bet",
      "trade",
      "travel",
      "hotel",
      "game",
      "porn",
      "sex",
      "dating",
      "cars",
      "auto",
      "mail",
      "cloud",
      "host",
      "soft",
      "app",
      "group",
      "corp",
      "inc",
      "ltd",
      "gmbh",
      "holding",
      "consult",
      "invest",
      "finance",
      "crypto",
      "coin"
    ]
  },
  media: {
    anywhere: [
      "news",
      "media",
      "radio",
      "press",
      "times",
      "post",
      "video",
      "tube",
      "stream",
      "blog",
      "tv",
      "magazin",
      "journal"
    ]
  },
  technology: { anywhere: ["tech", "digital", "data", "net", "web", "online", "software", "cyber", "labs", "systems"] }
}

export const wordFamilies: ReadonlyArray<WordFamily> = Object.keys(lexicon) as Array<WordFamily>

/** A label's text to read: a decoded `xn--` label in Unicode, lower case, else the label. */
const readable = (label: string): string => {
  if (!label.startsWith("xn--")) return label
  return decodePunycode(label.slice(4))?.toLowerCase() ?? label
}

/** A word family found in a label, and the stem that found it. */
export interface FamilyHit {
  readonly family: WordFamily
  readonly stem: string
  readonly label: string
}

/** The word families of `labels` (each family once, the first stem that found it). */
export const familiesOf = (labels: ReadonlyArray<string>): Array<FamilyHit> => {
  const hits: Array<FamilyHit> = []
  const texts = labels.map(readable)
  for (const family of wordFamilies) {
    const stems = lexicon[family]
    let found: FamilyHit | undefined
    for (let i = 0; i < texts.length && found === undefined; i++) {
      const text = texts[i]!
      const parts = text.split("-")
      const stem =
        stems.anywhere?.find((s) => text.includes(s)) ??
        stems.whole?.find((s) => parts.includes(s)) ??
        stems.start?.find((s) => parts.some((part) => part.startsWith(s) && part.length > s.length + 1))
      if (stem !== undefined) found = { family, stem, label: labels[i]! }
    }
    if (found !== undefined) hits.push(found)
  }
  return hits
}

/** The kind of top-level zone a registrable domain sits in. */
export type ZoneKind =
  | "academic-gtld"
  | "commercial-sld"
  | "organisation-sld"
  | "government-sld"
  | "cctld"
  | "generic-cctld"
  | "com"
  | "org"
  | "net"
  | "gtld"

/** New generic TLDs whose names are academic (`.university`, `.academy`); open to anyone, but chosen by schools. */
const academicGtlds = new Set([
  "university",
  "academy",
  "education",
  "school",
  "college",
  "institute",
  "study",
  "courses",
  "degree",
  "mba",
  "schule"
])
/** Country codes their registries sell to anyone anywhere, used as generic names (`.io`, `.tv`, `.me`). */
const genericCctlds = new Set([
  "ac",
  "ad",
  "ag",
  "ai",
  "am",
  "as",
  "bz",
  "cc",
  "cd",
  "cm",
  "co",
  "cx",
  "dj",
  "fm",
  "gg",
  "gl",
  "gs",
  "im",
  "io",
  "je",
  "la",
  "ly",
  "me",
  "ms",
  "mu",
  "nu",
  "re",
  "sc",
  "sh",
  "so",
  "sr",
  "st",
  "su",
  "tk",
  "tm",
  "to",
  "tv",
  "vc",
  "ws",
  "ml",
  "ga",
  "cf",
  "gq",
  "ws"
])
const commercialSld = /^(com|co|ltd|plc|biz|net|ne|or|info|me|tv|web|firm|shop|store|nom|inc)\./
const organisationSld = /^(org|asso|assn|ngo|or)\./
const governmentSld = /^(gov|gob|gouv|go|govt|gv|mil|nic|admin|mun|gob)\./

/** The zone kind of a public suffix (`com`, `co.uk`, `university`, `de`). */
export const zoneKindOf = (suffix: string): ZoneKind => {
  if (academicGtlds.has(suffix)) return "academic-gtld"
  if (suffix === "com") return "com"
  if (suffix === "org") return "org"
  if (suffix === "net") return "net"
  if (suffix.includes(".")) {
    if (governmentSld.test(suffix)) return "government-sld"
    if (organisationSld.test(suffix)) return "organisation-sld"
    if (commercialSld.test(suffix)) return "commercial-sld"
  }
  const tld = suffix.slice(suffix.lastIndexOf(".") + 1)
  if (tld.length !== 2) return "gtld"
  return genericCctlds.has(tld) && !suffix.includes(".") ? "generic-cctld" : "cctld"
}
