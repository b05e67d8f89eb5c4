import { createHash } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { MemoryBytes } from "../../src/jobs/JobStoreMemory.ts"
import { readJobInput } from "../../src/jobs/jobInput.ts"
import { JobInputError } from "../../src/jobs/jobInputError.ts"
import { encoder, read } from "./jobInputHelpers.ts"

/** The input error an upload fails with (a store failure is not what these tests are about). */
const failure = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.flatMap(Effect.flip(effect), (error) =>
    error instanceof JobInputError ? Effect.succeed(error) : Effect.die(error)
  )

describe("readJobInput: NDJSON", () => {
  it.effect("reads strings and objects with an email, as given; other lines are bad items", () =>
    Effect.gen(function* () {
      const body = [
        '"Jane@Ox.ac.uk"',
        '{"email":"bob@mit.edu","name":"Bob"}',
        '"a\\u0040b.edu"',
        "42",
        '{"mail":"x@y.z"}',
        "{not json",
        '  "spaced@x.edu"  ',
        '"ü@tum.de"'
      ].join("\n")
      const { input, items } = yield* read("ndjson", body)
      expect(items).toEqual([
        "Jane@Ox.ac.uk",
        { email: "bob@mit.edu", columns: ["Bob"] },
        "a@b.edu",
        { bad: "42", reason: "expected a JSON string or an object with a string email" },
        {
          bad: '{"mail":"x@y.z"}',
          reason: "expected a JSON string or an object with a string email",
          columns: [null, "x@y.z"]
        },
        { bad: "{not json", reason: "not valid JSON" },
        "spaced@x.edu",
        "ü@tum.de"
      ])
      expect(input).toMatchObject({ total: 8, badInput: 3, fields: {}, columns: ["name", "mail"] })
      expect(input.inputBytes).toBe(encoder.encode(body).length)
      expect(input.bodyHash).toBe(createHash("sha256").update(body).digest("hex"))
    })
  )

  it.effect("hashes the body only when asked (for an Idempotency-Key)", () =>
    Effect.gen(function* () {
      const body = '"a@x.edu"\n"b@x.edu"\n'
      const hashed = yield* read("ndjson", body, { hashBody: true })
      const plain = yield* read("ndjson", body, { hashBody: false })
      expect(hashed.input.bodyHash).toBe(createHash("sha256").update(body).digest("hex"))
      expect(plain.input.bodyHash).toBeUndefined()
      expect(plain.items).toEqual(hashed.items)
      expect(plain.input.total).toBe(2)
    })
  )

  it.effect("drops a BOM, accepts CRLF, skips blank lines, needs no final newline", () =>
    Effect.gen(function* () {
      const { input, items } = yield* read(
        "ndjson",
        '\uFEFF"a@x.edu"\r\n\r\n  \n"b@x.edu"\r\n{"email":"c@x.edu"}\r\n"d@x.edu"'
      )
      expect(items).toEqual(["a@x.edu", "b@x.edu", "c@x.edu", "d@x.edu"])
      expect(input.total).toBe(4)
    })
  )

  it.effect("keeps at most 1000 characters of a bad item and makes over-long emails bad items", () =>
    Effect.gen(function* () {
      const long = `"${"x".repeat(1100)}@x.edu"`
      const { items } = yield* read("ndjson", `[${"1,".repeat(900)}1]\n${long}`)
      expect((items[0] as { bad: string }).bad).toHaveLength(1000)
      expect(items[1]).toEqual({ bad: long.slice(1, 1001), reason: "longer than 1024 characters" })
    })
  )

  it.effect("rejects invalid UTF-8, zero emails, and stops at the limits, removing the output", () =>
    Effect.gen(function* () {
      const invalid = yield* failure(read("ndjson", Uint8Array.of(0x22, 0xc3, 0x28, 0x22, 0x0a)))
      expect(invalid).toMatchObject({ reason: "InvalidUtf8", code: "VALIDATION_ERROR" })
      expect(yield* failure(read("ndjson", "\n \r\n"))).toMatchObject({
        reason: "NoEmails",
        errors: [{ field: "/body" }]
      })
      const many = yield* failure(read("ndjson", '"a@x"\n"b@x"\n"c@x"\n', { maxEmails: 2 }))
      expect(many).toMatchObject({ reason: "TooManyEmails", errors: [{ field: "/body", code: "TOO_MANY" }] })
      const large = yield* failure(read("ndjson", '"a@x.edu"\n'.repeat(10), { maxBytes: 50 }))
      expect(large).toMatchObject({ reason: "BodyTooLarge", code: "PAYLOAD_TOO_LARGE" })
    })
  )

  it.effect("stops reading once over a limit: the rest of the body is never pulled", () =>
    Effect.gen(function* () {
      const body = Stream.make(encoder.encode('"a@x"\n"b@x"\n"c@x"\n')).pipe(
        Stream.concat(Stream.die("the body was read past the limit"))
      )
      const error = yield* failure(
        readJobInput(body, { format: "ndjson", output: new MemoryBytes(), maxEmails: 2, maxBytes: 1e6 })
      )
      expect(error.reason).toBe("TooManyEmails")
    })
  )
})

describe("readJobInput: CSV", () => {
  it.effect("reads the email column (any case) and keeps the others as columns; RFC 4180 quoting", () =>
    Effect.gen(function* () {
      const body = [
        "name,E-Mail-ignored,EMAIL,note",
        'Jane,x,jane@ox.ac.uk,"likes, commas"',
        '"Bob ""B""",x,"bob@mit.edu","multi',
        'line"',
        'Kim,x,"k""q@x.edu"',
        "",
        "short,row",
        "Lee,x,,",
        'Ann,x,"ann@x.edu'
      ].join("\r\n")
      const { input, items } = yield* read("csv", `\uFEFF${body}`)
      expect(items).toEqual([
        { email: "jane@ox.ac.uk", columns: ["Jane", "x", "likes, commas"] },
        { email: "bob@mit.edu", columns: ['Bob "B"', "x", "multi\r\nline"] },
        { email: 'k"q@x.edu', columns: ["Kim", "x"] },
        { bad: "short,row", reason: "the row has no email cell", columns: ["short", "row"] },
        { bad: "Lee,x,,", reason: "the email cell is empty", columns: ["Lee", "x", ""] },
        { bad: "Ann,x,ann@x.edu", reason: "a quoted field is not closed", columns: ["Ann", "x"] }
      ])
      expect(input).toMatchObject({ total: 6, badInput: 3, columns: ["name", "E-Mail-ignored", "note"] })
    })
  )

  it.effect("reads ; and tab delimited files, detected from the header row or named", () =>
    Effect.gen(function* () {
      const badRow = yield* read("csv", "id;email\n7;\n")
      expect(badRow.items).toEqual([{ bad: "7;", reason: "the email cell is empty", columns: ["7"] }])
      const semicolons = yield* read(
        "csv",
        "\uFEFFcustomerId;email;note\r\nc-1;jane@ox.ac.uk;a, b\r\nc-2;bob@mit.edu;\r\n"
      )
      expect(semicolons.items).toEqual([
        { email: "jane@ox.ac.uk", columns: ["c-1", "a, b"] },
        { email: "bob@mit.edu", columns: ["c-2", ""] }
      ])
      const tabs = yield* read("csv", "email\tcustomerId\njane@ox.ac.uk\tc-1\n")
      expect(tabs.items).toEqual([{ email: "jane@ox.ac.uk", columns: ["c-1"] }])
      // A header with more commas than semicolons reads as commas, unless the delimiter is named.
      const named = yield* read("csv", "email;name, with comma, and more\njane@ox.ac.uk;Jane\n", {
        delimiter: "semicolon"
      })
      expect(named.items).toEqual([{ email: "jane@ox.ac.uk", columns: ["Jane"] }])
      expect(named.input.columns).toEqual(["name, with comma, and more"])
    })
  )

  it.effect("names repeated and empty header cells by position, and cells past the header", () =>
    Effect.gen(function* () {
      const { input, items } = yield* read("csv", "id,email,id,\n1,a@x.edu,2,3,4\n")
      expect(input.columns).toEqual(["id", "id 3", "column 4", "column 5"])
      expect(items).toEqual([{ email: "a@x.edu", columns: ["1", "2", "3", "4"] }])
    })
  )

  it.effect("refuses more than 100 columns besides the email", () =>
    Effect.gen(function* () {
      const header = ["email", ...Array.from({ length: 101 }, (_, i) => `c${i}`)].join(",")
      expect(yield* failure(read("csv", `${header}\na@x.edu\n`))).toMatchObject({
        reason: "TooManyColumns",
        errors: [{ code: "TOO_MANY_COLUMNS" }]
      })
    })
  )

  it.effect("needs a header row with an email column", () =>
    Effect.gen(function* () {
      const error = yield* failure(read("csv", "name,mail\nJane,jane@ox.ac.uk\n"))
      expect(error).toMatchObject({ reason: "MissingEmailColumn", errors: [{ field: "/body/header" }] })
      expect(yield* failure(read("csv", "email\r\n\r\n"))).toMatchObject({ reason: "NoEmails" })
      expect(yield* failure(read("csv", "email\na@x\nb@x\nc@x\n", { maxEmails: 2 }))).toMatchObject({
        reason: "TooManyEmails"
      })
    })
  )
})

describe("readJobInput: JSON", () => {
  it.effect("reads the document's emails and fields", () =>
    Effect.gen(function* () {
      const body = JSON.stringify({
        emails: ["a@x.edu", { email: "b@x.edu" }, 7, null],
        offerId: "spring",
        callbackUrl: "https://samples.com/hook"
      })
      const { input, items } = yield* read("json", `\uFEFF${body}`)
      expect(items).toEqual([
        "a@x.edu",
        "b@x.edu",
        { bad: "7", reason: "expected a JSON string or an object with a string email" },
        { bad: "null", reason: "expected a JSON string or an object with a string email" }
      ])
      expect(input.fields).toEqual({ offerId: "spring", callbackUrl: "https://samples.com/hook" })
    })
  )

  it.effect("names what is wrong with the document", () =>
    Effect.gen(function* () {
      expect(yield* failure(read("json", '{"emails": ['))).toMatchObject({
        reason: "MalformedJson",
        code: "MALFORMED_JSON"
      })
      const shape = yield* failure(read("json", '{"emails": "a@x", "targetGroupId": 5, "callbackUrl": "ftp://x"}'))
      expect(shape.code).toBe("VALIDATION_ERROR")
      expect(shape.errors.map((error) => error.field).sort()).toEqual(["/callbackUrl", "/emails", "/targetGroupId"])
      expect(yield* failure(read("json", "{}"))).toMatchObject({ errors: [{ field: "/emails", code: "REQUIRED" }] })
      expect(yield* failure(read("json", '{"emails": []}'))).toMatchObject({ reason: "NoEmails" })
      expect(yield* failure(read("json", '{"emails": ["a","b","c"]}', { maxEmails: 2 }))).toMatchObject({
        errors: [{ field: "/emails", code: "TOO_MANY" }]
      })
      expect(yield* failure(read("json", '{"emails": ["a"]}', { maxBytes: 5 }))).toMatchObject({
        reason: "BodyTooLarge"
      })
    })
  )

  it.effect("reads the document as it arrives, refusing what it cannot read in bounded memory", () =>
    Effect.gen(function* () {
      const notObject = yield* failure(read("json", '["a@x.edu"]'))
      expect(notObject).toMatchObject({ code: "VALIDATION_ERROR", errors: [{ field: "/", code: "INVALID_TYPE" }] })
      const twice = yield* failure(read("json", '{"emails": ["a@x.edu"], "emails": ["b@x.edu"]}'))
      expect(twice.errors).toEqual([{ field: "/emails", code: "DUPLICATE", message: "this field appears twice" }])
      const long = yield* failure(
        read("json", `{"emails": ["a@x.edu", {"email": "b", "pad": "${"x".repeat(70_000)}"}]}`)
      )
      expect(long.errors).toEqual([{ field: "/emails/1", code: "TOO_LONG", message: "longer than 65536 characters" }])
      for (const broken of [
        '{"emails": ["a@x.edu",]}',
        '{"emails": ["a"]} x',
        '{"emails" ["a"]}',
        '{"emails": [tru]}'
      ]) {
        expect(yield* failure(read("json", broken))).toMatchObject({ code: "MALFORMED_JSON" })
      }
      const escaped = yield* read("json", '{"em\\u0061ils": ["q\\"uote@x.edu", "\\u00fc@x.edu"]}')
      expect(escaped.items).toEqual(['q"uote@x.edu', "ü@x.edu"])
    })
  )
})

describe("readJobInput: durability", () => {
  /** Bytes whose synchronous `sync` would hold the request thread for the whole fsync of the upload. */
  class FlushOnly extends MemoryBytes {
    flushes = 0
    readonly flushFails: boolean
    constructor(flushFails = false) {
      super()
      this.flushFails = flushFails
    }
    override sync(): void {
      throw new Error("an upload must not be made durable on the request thread (sync)")
    }
    override flush(): Promise<void> {
      this.flushes++
      return this.flushFails ? Promise.reject(new Error("EIO")) : Promise.resolve()
    }
  }
  const upload = (output: MemoryBytes) =>
    readJobInput(Stream.make(encoder.encode('"a@x.edu"\n"b@x.edu"\n')), {
      format: "ndjson",
      output,
      maxEmails: 10,
      maxBytes: 1e6
    })

  it.effect("waits for the upload to be durable without holding the thread (flush, not sync)", () =>
    Effect.gen(function* () {
      const output = new FlushOnly()
      const input = yield* upload(output)
      expect(input.total).toBe(2)
      expect(output.flushes).toBe(1)
    })
  )

  it.effect("a flush that fails is the store's error, and the upload is not accepted", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(upload(new FlushOnly(true)))
      expect(error).toMatchObject({ _tag: "JobStoreError", operation: "upload" })
    })
  )
})
