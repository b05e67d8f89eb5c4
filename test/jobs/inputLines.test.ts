import { describe, expect, it } from "vitest"
import { badInputLine, decodeInputLines, emailLine, InputReader } from "../../src/jobs/inputLines.ts"
import { inputText, textBytes } from "./jobTesting.ts"

const decodeLine = (line: string) => {
  const items = decodeInputLines(Buffer.from(`${line}\n`))
  expect(items).toHaveLength(1)
  return items[0]
}

describe("input lines", () => {
  it("read back what was written: emails as given, bad input with its reason", () => {
    const emails = ["a@mit.edu", ' "quoted"@x.edu ', "back\\slash@x.edu", "ünï@tum.de", 'q"@x.edu', '"', ""]
    for (const email of emails) expect(decodeLine(emailLine(email))).toBe(email)
    expect(decodeLine(badInputLine("x".repeat(2000), "Not text."))).toEqual({
      bad: "x".repeat(1000),
      reason: "Not text."
    })
    const lines = emails.map(emailLine)
    expect(decodeInputLines(Buffer.from(lines.join("\n")))).toEqual(emails)
    expect(decodeInputLines(Buffer.from(`xx\n${lines.join("\n")}\n`), 3)).toEqual(emails)
  })

  it("read a line that is neither as bad input", () => {
    expect(decodeLine("42")).toMatchObject({ bad: "42" })
    expect(decodeLine("{not json")).toMatchObject({ bad: "{not json" })
    expect(decodeLine("")).toMatchObject({ bad: "" })
    expect(decodeLine('"')).toMatchObject({ bad: '"' })
    expect(decodeInputLines(Buffer.from('"a@x.edu"\n\n"b@x.edu"\n'))).toEqual([
      "a@x.edu",
      { bad: "", reason: "The input line could not be read." },
      "b@x.edu"
    ])
  })

  it("come in chunks that end on line boundaries and resume at a byte offset", () => {
    const items = ["a@mit.edu", "b@mit.edu", { bad: "???", reason: "No @." }, "ü@tum.de", "c@x.edu"]
    const input = textBytes(inputText(items))
    const reader = new InputReader(input, { offset: 0, blockBytes: 16 })
    const first = reader.next(2)!
    expect(first.items).toEqual(["a@mit.edu", "b@mit.edu"])
    const rest = []
    for (let chunk = reader.next(2); chunk !== undefined; chunk = reader.next(2)) rest.push(...chunk.items)
    expect(rest).toEqual(items.slice(2))
    const resumed = new InputReader(input, { offset: first.bytes, blockBytes: 64 })
    expect(resumed.next(10)?.items).toEqual(items.slice(2))
    const done = new InputReader(input, { offset: 0, end: first.bytes, blockBytes: 64 })
    expect(done.next(10)?.items).toEqual(items.slice(0, 2))
    expect(done.next(10)).toBeUndefined()
  })

  it("read a last line without a line break", () => {
    const input = textBytes(`${emailLine("a@mit.edu")}\n${emailLine("b@mit.edu")}`)
    const reader = new InputReader(input, { offset: 0, blockBytes: 8 })
    expect(reader.next(5)?.items).toEqual(["a@mit.edu"])
    expect(reader.next(5)?.items).toEqual(["b@mit.edu"])
    expect(reader.next(5)).toBeUndefined()
  })
})
