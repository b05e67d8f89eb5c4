import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { describe, expect, it } from "vitest"
import { makeCampusgateClient } from "../../src/api/client.ts"
import { makeKey, sharedDaemon } from "./daemon.ts"

let key: string

const daemon = sharedDaemon((dirs) => {
  key = makeKey(dirs, "acme", ["validate:target-groups", "validate:bulk", "jobs:read"])
})

const withClient = <A, E>(
  apiKey: string,
  use: (client: Effect.Success<ReturnType<typeof makeCampusgateClient>>) => Effect.Effect<A, E>
) => Effect.runPromise(Effect.flatMap(makeCampusgateClient({ baseUrl: daemon.url, apiKey }), use))

describe("the typed client against the real daemon", () => {
  it("validates an email against a target group and decodes the result", async () => {
    const result = await withClient(key, (client) =>
      client.validation.targetGroup({ payload: { email: "jane@ox.ac.uk", targetGroupId: "uk-students" } })
    )
    expect(result).toMatchObject({
      isValid: true,
      targetGroup: { id: "uk-students" },
      matchedDomain: "ox.ac.uk",
      requestId: expect.any(String)
    })
  })

  it("validates in bulk, in input order", async () => {
    const emails = ["jane@ox.ac.uk", "bob@mit.edu"]
    const result = await withClient(key, (client) =>
      client.validation.bulk({ payload: { emails, targetGroupId: "uk-students" } })
    )
    expect(result.results.map((item) => item.email)).toEqual(emails)
    expect(result.summary).toMatchObject({ total: 2, valid: 1, invalid: 1 })
  })

  it("submits a streamed NDJSON job, follows it and pages its results", async () => {
    const lines = ['"jane@ox.ac.uk"', '"bob@mit.edu"', '"kim@cam.ac.uk"']
    const body = new TextEncoder().encode(`${lines.join("\n")}\n`)
    const job = await withClient(key, (client) =>
      Effect.gen(function* () {
        const accepted = yield* client.jobs.submit({
          query: { targetGroupId: "uk-students" },
          headers: {},
          payload: Stream.make(body)
        })
        for (;;) {
          const current = yield* client.jobs.get({ params: { jobId: accepted.jobId } })
          if (current.status !== "queued" && current.status !== "running") return current
          yield* Effect.sleep("20 millis")
        }
      })
    )
    expect(job).toMatchObject({ status: "completed", progress: { total: 3, processed: 3 } })
    const page = await withClient(key, (client) =>
      client.jobs.results({ params: { jobId: job.jobId }, query: { limit: 2 } })
    )
    expect(page.data.map((row) => row.email)).toEqual(["jane@ox.ac.uk", "bob@mit.edu"])
    expect(page.nextCursor).toEqual(expect.any(String))
  })

  it("surfaces an unknown target group as a typed NotFound problem", async () => {
    const error = await withClient(key, (client) =>
      Effect.flip(
        client.validation.targetGroup({ payload: { email: "jane@ox.ac.uk", targetGroupId: "no-such-group" } })
      )
    )
    expect(error._tag).toBe("NotFound")
    if (error._tag !== "NotFound") return
    expect(error.code).toBe("NOT_FOUND")
    expect(error.detail).toContain("no-such-group")
    expect(error.requestId).toEqual(expect.any(String))
  })

  it("surfaces a malformed email as a typed BadRequest with field errors", async () => {
    const error = await withClient(key, (client) =>
      Effect.flip(client.validation.targetGroup({ payload: { email: "jane.ox.ac.uk", targetGroupId: "uk-students" } }))
    )
    expect(error._tag).toBe("BadRequest")
    if (error._tag !== "BadRequest") return
    expect(error.code).toBe("INVALID_EMAIL_FORMAT")
    expect(error.errors?.[0]).toMatchObject({ field: "/email" })
  })

  it("surfaces a wrong key as Unauthorized and a missing scope as Forbidden", async () => {
    const unauthorized = await withClient("cg_not_a_real_key", (client) =>
      Effect.flip(client.validation.targetGroup({ payload: { email: "jane@ox.ac.uk", targetGroupId: "uk-students" } }))
    )
    expect(unauthorized).toMatchObject({ _tag: "Unauthorized", code: "INVALID_API_KEY" })
    const forbidden = await withClient(key, (client) =>
      Effect.flip(client.validation.offer({ payload: { email: "jane@ox.ac.uk", offerId: "acme-student-discount" } }))
    )
    expect(forbidden).toMatchObject({ _tag: "Forbidden", code: "INSUFFICIENT_SCOPE", requiredScope: "validate:offers" })
  })
})

describe("examples/http-client.ts", () => {
  const example = fileURLToPath(new URL("../../examples/http-client.ts", import.meta.url))
  const run = (args: ReadonlyArray<string>) =>
    promisify(execFile)(process.execPath, [example, ...args], {
      env: { ...process.env, CAMPUSGATE_URL: daemon.url, CAMPUSGATE_API_KEY: key }
    }).then(
      ({ stdout }) => ({ code: 0, stdout, stderr: "" }),
      (error: { code: number; stdout: string; stderr: string }) => error
    )

  it("runs against the daemon with the built package and prints the result", async () => {
    const ok = await run(["jane@ox.ac.uk", "uk-students"])
    expect(ok.code).toBe(0)
    expect(JSON.parse(ok.stdout)).toMatchObject({ isValid: true, matchedDomain: "ox.ac.uk" })
    const missing = await run(["jane@ox.ac.uk", "no-such-group"])
    expect(missing.code).toBe(1)
    expect(JSON.parse(missing.stderr)).toMatchObject({ code: "NOT_FOUND" })
  })
})
