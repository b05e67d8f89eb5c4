/**
 * Country-code top-level domains that do not simply name their country.
 *
 * Used by `countryFromTld` to guess an *academic institution's* country from
 * its domain. The question for each ccTLD is therefore not "is it sold
 * worldwide?" but "when an institution's domain ends in it, is the
 * institution in that country?". A ccTLD is listed as generic-use when it is
 * marketed and mostly registered as a generic name AND the territory's own
 * institutions (if any) do not rely on the bare TLD — they either do not
 * exist or sit under an academic zone (`ac.me`, `edu.ws`), which still counts.
 *
 * Deliberately NOT generic-use, although popular with start-ups:
 * - `co`: Colombia has hundreds of higher-education institutions and they are
 *   almost all under `edu.co` or `.co` itself (`unal.edu.co`, `uniandes.edu.co`);
 *   an academic institution abroad on a bare `.co` is rare. Dropping `co` would
 *   lose a whole country to avoid a handful of false attributions.
 * - `ly` (Libya), `fm` (Micronesia: `comfsm.fm`), `am` (Armenia), `md`
 *   (Moldova), and `in`, `is`, `it` (popular in domain hacks): their own
 *   universities use the bare TLD, and foreign academic use is rare.
 */

/**
 * Generic-use ccTLDs (lower case), with why:
 * io (British Indian Ocean Territory, no resident population), ai (Anguilla),
 * tv (Tuvalu), cc (Cocos Islands), tk (Tokelau), cx (Christmas Island),
 * nu (Niue, sold as "now" in Nordic languages), ws (Samoa, "website";
 * National University of Samoa is `nus.edu.ws`), me (Montenegro, "me";
 * University of Montenegro is `ucg.ac.me`), gg (Guernsey, gaming; no
 * university), sh (Saint Helena), to (Tonga, whose students attend the
 * University of the South Pacific under `usp.ac.fj`), la (Laos, sold as
 * "Los Angeles"; National University of Laos is `nuol.edu.la`).
 */
export const genericUseCcTlds: ReadonlySet<string> = new Set([
  "io",
  "ai",
  "tv",
  "cc",
  "tk",
  "cx",
  "nu",
  "ws",
  "me",
  "gg",
  "sh",
  "to",
  "la"
])

/**
 * Second-level labels under which a ccTLD registry admits only (or mostly)
 * local educational institutions, so the country is known even for a
 * generic-use ccTLD: `ac.me`, `edu.ws`, `edu.la`, `sch.gg`.
 */
export const trustedSecondLevels: ReadonlySet<string> = new Set(["ac", "edu", "sch"])

/**
 * TLDs whose country is not their upper-cased label: `""` means "no country".
 * `uk` is GB's ccTLD (ISO code GB; `gb` itself is reserved but unused), `su`
 * is the Soviet-era domain still run for Russia; `eu` is a union, not a
 * country; `ac` (Ascension, a part of SH) is sold as "academic" and says
 * nothing about where an institution is. Internationalised ccTLDs are given
 * in their ASCII (punycode) form.
 */
export const tldCountryExceptions: Readonly<Record<string, string>> = {
  uk: "GB",
  su: "RU",
  eu: "",
  ac: "",
  "xn--p1ai": "RU", // рф
  "xn--fiqs8s": "CN", // 中国
  "xn--fiqz9s": "CN", // 中國
  "xn--kprw13d": "TW", // 台湾
  "xn--kpry57d": "TW", // 台灣
  "xn--j6w193g": "HK", // 香港
  "xn--3e0b707e": "KR", // 한국
  "xn--o3cw4h": "TH", // ไทย
  "xn--h2brj9c": "IN", // भारत
  "xn--90a3ac": "RS", // срб
  "xn--j1amh": "UA", // укр
  "xn--90ais": "BY", // бел
  "xn--80ao21a": "KZ", // қаз
  "xn--d1alf": "MK", // мкд
  "xn--qxam": "GR", // ελ
  "xn--wgbh1c": "EG", // مصر
  "xn--mgbaam7a8h": "AE", // امارات
  "xn--mgberp4a5d4ar": "SA", // السعودية
  "xn--mgba3a4f16a": "IR" // ایران
}
