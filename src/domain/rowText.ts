/**
 * A result row's JSON text: byte for byte what `JSON.stringify(row)` writes
 * for a row whose members are in the schema's order, as `toResultRow` makes
 * them (test/domain/rowText.test.ts holds it so for any such row), written
 * fast, since jobs write a million rows and bulk answers a thousand a
 * request.
 *
 * What repeats from row to row is written once and kept flat: the matched
 * domain with its institution (per frozen institution object, which the rows
 * of one domain share), each reason code, each matched target group. The
 * address and the reason sentence cost one scan each (`jsonString`), no
 * copy: as fast as `JSON.stringify` on a reason, which is long and, in an
 * offer's row, freshly concatenated, and a fifth less memory for an offer's
 * rows to collect. Kept texts are flat because a string built by `+` is a
 * tree its every user walks again.
 *
 * Tried and dropped, as they cost more than they saved on the benchmark's mix
 * of target-group and offer rows (`npm run bench:rows`, against the code
 * this replaced, `bench/rowsReference.ts`): a memo of reason sentences by
 * their text (a fresh sentence is hashed before it is found), and keeping
 * each institution's last reason or whole verdict text (an institution's
 * next row has another verdict about as often as not).
 */
import { flat, jsonString, TextMemo } from "./jsonText.ts"
import { ReasonCode } from "./ReasonCode.ts"
import type { ResultRow, RowInstitution, RowVerdict } from "./ResultRow.ts"

/** The `reasonCode` member of each code, written once. */
const reasonCodeTexts = new Map(ReasonCode.literals.map((code) => [code, flat(`,"reasonCode":${jsonString(code)}`)]))
const reasonCodeText = (code: ReasonCode): string => reasonCodeTexts.get(code) ?? `,"reasonCode":${jsonString(code)}`

/** Target groups an offer's rows name, by id: as many as the configuration has, bounded all the same. */
const oneGroup = new TextMemo(4096, (id) => `,"matchedTargetGroups":[${jsonString(id)}]`)

const groupsText = (ids: ReadonlyArray<string>): string => {
  if (ids.length === 0) return `,"matchedTargetGroups":[]`
  if (ids.length === 1) return oneGroup.get(ids[0]!)
  let text = `,"matchedTargetGroups":[${jsonString(ids[0]!)}`
  for (let i = 1; i < ids.length; i++) text += `,${jsonString(ids[i]!)}`
  return `${text}]`
}

const domainText = (matchedDomain: string | undefined): string =>
  matchedDomain === undefined ? "" : `,"matchedDomain":${jsonString(matchedDomain)}`

/** The `matchedDomain` and `institution` members as last written for a row of this institution. */
interface KeptPlace {
  readonly institution: string
  matchedDomain: string | undefined
  text: string
}
const keptPlaces = new WeakMap<RowInstitution, KeptPlace>()

const placeText = (matchedDomain: string | undefined, institution: RowInstitution): string => {
  const kept = keptPlaces.get(institution)
  if (kept === undefined) {
    const json = JSON.stringify(institution)
    const text = flat(`${domainText(matchedDomain)},"institution":${json}`)
    if (Object.isFrozen(institution)) keptPlaces.set(institution, { institution: json, matchedDomain, text })
    return text
  }
  if (kept.matchedDomain !== matchedDomain) {
    kept.matchedDomain = matchedDomain
    kept.text = flat(`${domainText(matchedDomain)},"institution":${kept.institution}`)
  }
  return kept.text
}

/**
 * A row's members after `email` (`isValid` to `reason`), written from any
 * object holding them: a row, or a `RowVerdict` that rows of one verdict
 * share. Without `reason` when `withReason` is false.
 *
 * Each member is read from the row once: rows come in many shapes (each set
 * of present members is one), so every read is a slow, megamorphic one
 * (measured: `npm run bench:rows` with target-group rows alone, then mixed
 * with an offer's).
 */
const membersText = (row: RowVerdict, withReason: boolean): string => {
  const { isValid, matchedTargetGroups, matchedDomain, institution, reasonCode } = row
  const reason = withReason ? row.reason : undefined
  let text = isValid ? `,"isValid":true` : `,"isValid":false`
  if (matchedTargetGroups !== undefined) text += groupsText(matchedTargetGroups)
  text += institution === undefined ? domainText(matchedDomain) : placeText(matchedDomain, institution)
  if (reasonCode !== undefined) text += reasonCodeText(reasonCode)
  return reason === undefined ? text : `${text},"reason":${jsonString(reason)}`
}

/** Matched target groups as shared verdicts keep them: one frozen array per list of ids (bounded as `TextMemo`). */
const groupLists = new Map<string, ReadonlyArray<string>>()
const groupList = (ids: ReadonlyArray<string>): ReadonlyArray<string> => {
  const key = ids.join("\u0000")
  let list = groupLists.get(key)
  if (list === undefined) {
    list = Object.freeze([...ids])
    if (groupLists.size >= 4096) groupLists.clear()
    groupLists.set(key, list)
  }
  return list
}

/** Room for the text of a few hundred shared verdicts (200-400 bytes each), taken one after another. */
const VERDICT_TEXT_CHUNK = 256 * 1024
let verdictChunk = Buffer.allocUnsafeSlow(VERDICT_TEXT_CHUNK)
let verdictChunkUsed = 0

/**
 * A verdict many rows share (a job's rows of one host,
 * `app/rowVerdicts.ts`), with its text (`verdictText`) written once, as
 * bytes: such a row's text is then its address and these.
 * It keeps of the row's members only what counts read (`isValid`,
 * `matchedTargetGroups`, `reasonCode`: the metrics, the usage statistics);
 * the others are in its text alone, so that the tens of thousands a job
 * keeps cost their text and little more (a reason sentence made for one
 * host would be kept twice). Never changed once made.
 *
 * The text is kept as UTF-8 bytes in chunks outside the heap, a chunk alive
 * as long as a verdict whose text it holds, not as a string: a job thread's ~39k verdicts of bench:jobs' cold offer
 * job held 15.6 MB of strings in its heap, which its young-generation
 * collections copied twice (to survive, then to promote) and its full ones
 * traced, and every row encoded its verdict's string into UTF-8 again
 * where it now copies bytes.
 */
export class SharedVerdict implements RowVerdict {
  readonly isValid: boolean
  readonly matchedTargetGroups?: ReadonlyArray<string>
  readonly reasonCode?: ReasonCode
  /**
   * `verdictText` of the row's members, as UTF-8: `textChunk[textStart..textEnd]`. Offsets in the verdict itself,
   * not a view of the chunk: a view is one more object between a row and its bytes (measured: a warm offer pass of
   * bench:jobs:batches, 1.13x as long that way).
   */
  readonly textChunk: Buffer
  readonly textStart: number
  readonly textEnd: number

  /** The verdict of `row` (its members but the address and a job's). */
  constructor(row: RowVerdict) {
    this.isValid = row.isValid
    if (row.matchedTargetGroups !== undefined) this.matchedTargetGroups = groupList(row.matchedTargetGroups)
    if (row.reasonCode !== undefined) this.reasonCode = row.reasonCode
    const text = membersText(row, true)
    const most = 3 * text.length
    if (verdictChunkUsed + most > verdictChunk.length) {
      verdictChunk = Buffer.allocUnsafeSlow(Math.max(VERDICT_TEXT_CHUNK, most))
      verdictChunkUsed = 0
    }
    this.textChunk = verdictChunk
    this.textStart = verdictChunkUsed
    verdictChunkUsed += verdictChunk.write(text, verdictChunkUsed)
    this.textEnd = verdictChunkUsed
  }
}

/** A row's members after `email` (`,"isValid":…` up to `reason`), of a row or a verdict: `rowText` is `{"email":…` and this. */
export const verdictText = (verdict: RowVerdict): string =>
  verdict instanceof SharedVerdict
    ? verdict.textChunk.toString("utf8", verdict.textStart, verdict.textEnd)
    : membersText(verdict, true)

/**
 * `rowText` up to where `duplicateOf` goes (no closing brace): a job's rows
 * are encoded on worker threads before the job knows which repeat an earlier
 * row, and `duplicateOf` is put in between when the rows are appended.
 * Without `reason` when `withReason` is false.
 */
export const rowTextBeforeDuplicate = (row: ResultRow, withReason = true): string => {
  // As `membersText`, written out: a row's text in one function is what `npm run bench:rows` measured fastest.
  const { email, isValid, matchedTargetGroups, matchedDomain, institution, reasonCode } = row
  const reason = withReason ? row.reason : undefined
  let text = `{"email":${jsonString(email)}${isValid ? `,"isValid":true` : `,"isValid":false`}`
  if (matchedTargetGroups !== undefined) text += groupsText(matchedTargetGroups)
  text += institution === undefined ? domainText(matchedDomain) : placeText(matchedDomain, institution)
  if (reasonCode !== undefined) text += reasonCodeText(reasonCode)
  return reason === undefined ? text : `${text},"reason":${jsonString(reason)}`
}

/** The `duplicateOf` member of `rowText`, with its leading comma. */
export const duplicateOfText = (row: number): string => `,"duplicateOf":${row}`

/** `rowText` after `duplicateOf`: the input's columns and the closing brace. */
export const rowTextAfterDuplicate = (row: ResultRow): string =>
  row.columns === undefined ? "}" : `,"columns":${JSON.stringify(row.columns)}}`

/** `JSON.stringify(row)`; without `reason` when `withReason` is false. */
export const rowText = (row: ResultRow, withReason = true): string =>
  rowTextBeforeDuplicate(row, withReason) +
  (row.duplicateOf === undefined ? "" : duplicateOfText(row.duplicateOf)) +
  rowTextAfterDuplicate(row)
