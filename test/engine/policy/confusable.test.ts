import { domainToASCII, domainToUnicode } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { assessConfusable, skeleton } from "../../../src/engine/policy/index.ts"
import { itAnswers } from "../../support/tables.ts"

/** Assesses a domain typed in Unicode, as the email parser would after IDNA. */
const assess = (typed: string) => {
  const ascii = domainToASCII(typed)
  return assessConfusable(ascii, domainToUnicode(ascii))
}

describe("assessConfusable", () => {
  it("answers plain ASCII domains from a constant", () => {
    expect(assessConfusable("mit.edu", "mit.edu")).toEqual({ mixedScript: false, imitates: null, scripts: ["Latin"] })
    expect(assessConfusable("mit.edu", "mit.edu")).toBe(assessConfusable("ox.ac.uk", "ox.ac.uk"))
  })

  it.each([
    ["m\u0456t.edu", "mit.edu", true, ["Cyrillic", "Latin"]], // Cyrillic і
    ["\u043ex.ac.uk", "ox.ac.uk", true, ["Cyrillic", "Latin"]], // Cyrillic о, whole label
    ["ox.\u0430\u0441.uk", "ox.ac.uk", false, ["Cyrillic", "Latin"]], // Cyrillic ас, single-script label
    ["stanf\u03bfrd.edu", "stanford.edu", true, ["Greek", "Latin"]], // Greek ο
    ["\u0455tanford.edu", "stanford.edu", true, ["Cyrillic", "Latin"]], // Cyrillic ѕ
    ["st\u0430nf\u043erd.edu", "stanford.edu", true, ["Cyrillic", "Latin"]],
    ["\u0430\u0440\u0440\u04cf\u0435.com", "apple.com", false, ["Cyrillic", "Latin"]], // all-Cyrillic "аррӏе"
    ["gma\u0131l.com", "gmail.com", false, ["Latin"]], // dotless ı
    ["m\u1ea1it.edu", "mait.edu", false, ["Latin"]], // ạ: a dot below is invisible at text size
    ["harv\u0251rd.edu", "harvard.edu", false, ["Latin"]] // Latin alpha ɑ
  ])("%s imitates %s", (typed, imitated, mixedScript, scripts) => {
    expect(assess(typed)).toEqual({ mixedScript, imitates: imitated, scripts })
  })

  it.each([
    ["müller.de", ["Latin"]],
    ["東京大学.jp", ["Han", "Latin"]],
    ["уни.рф", ["Cyrillic"]],
    ["日本語とカタカナ.jp", ["Han", "Hiragana", "Katakana", "Latin"]],
    ["한국대학교.kr", ["Hangul", "Latin"]],
    ["παν.gr", ["Greek", "Latin"]],
    ["université.fr", ["Latin"]]
  ])("%s is a legitimate IDN imitating nothing", (typed, scripts) => {
    expect(assess(typed)).toEqual({ mixedScript: false, imitates: null, scripts })
  })

  it("flags a label mixing scripts even when its skeleton is not ASCII", () => {
    expect(assess("caf\u00e9\u0445.com")).toEqual({ mixedScript: true, imitates: null, scripts: ["Cyrillic", "Latin"] })
  })

  it("decodes the ASCII form when the caller has no Unicode form", () => {
    expect(assessConfusable("xn--mt-hoc.edu", "xn--mt-hoc.edu").imitates).toBe("mit.edu")
  })

  it("does not report an undecodable xn-- label as imitating itself", () => {
    expect(assessConfusable("xn--zz.com", "xn--zz.com").imitates).toBeNull()
  })
})

describe("skeleton", () => {
  itAnswers("maps full-width, mathematical and invisible characters: %j → %j", skeleton, [
    ["ｍｉｔ.edu", "mit.edu"],
    ["\u{1d426}it.edu", "mit.edu"],
    ["m\u200bit.edu", "mit.edu"],
    ["\u0130stanbul", "istanbul"]
  ])

  it("keeps visible accents", () => {
    expect(skeleton("müller")).not.toBe("muller")
    expect(skeleton("é")).not.toBe("e")
  })
})
