/**
 * The outbox transport (the embedded default's mail): messages hold an
 * address and a code, so they are private to the daemon's user, a write
 * that fails leaves nothing behind, and what a crash cut short is removed
 * when the outbox opens.
 */
import { mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { afterEach, describe, expect, it, vi } from "vitest"
import { MailTransport, type OutgoingMail } from "../../src/verification/MailTransport.ts"

const mail: OutgoingMail = {
  verificationId: "ver_00000000000000000000000001",
  from: "Campusgate <no-reply@localhost>",
  to: "jane@ox.ac.uk",
  subject: "Your code",
  text: "123456",
  html: "<p>123456</p>"
}

afterEach(() => {
  vi.useRealTimers()
})

describe("the outbox", () => {
  it("removes the temporary files of an interrupted write when it opens; messages are 0600 in a 0700 directory", async () => {
    const directory = join(mkdtempSync(join(tmpdir(), "campusgate-outbox-")), "outbox")
    mkdirSync(directory, { mode: 0o755 })
    writeFileSync(join(directory, ".2026-01-01T00-00-00-000Z-000-ver_x.eml.tmp"), "half a message")
    writeFileSync(join(directory, "2026-01-01T00-00-00-000Z-000-ver_y.eml"), "a whole message")
    const outbox = MailTransport.makeOutbox(directory)
    expect(readdirSync(directory)).toEqual(["2026-01-01T00-00-00-000Z-000-ver_y.eml"])
    await Effect.runPromise(outbox.send(mail))
    const written = readdirSync(directory).find((name) => name.includes(mail.verificationId))!
    expect(statSync(join(directory, written)).mode & 0o777).toBe(0o600)
    expect(statSync(directory).mode & 0o777).toBe(0o700)
  })

  it("leaves nothing behind when a message cannot be written", async () => {
    const directory = mkdtempSync(join(tmpdir(), "campusgate-outbox-"))
    vi.useFakeTimers({ toFake: ["Date"] })
    vi.setSystemTime(new Date("2026-11-28T12:00:00.000Z"))
    // Where the message would go stands a directory that is not empty: the last step fails.
    const target = join(directory, `2026-11-28T12-00-00-000Z-000-${mail.verificationId}.eml`)
    mkdirSync(join(target, "in-the-way"), { recursive: true })
    const outbox = MailTransport.makeOutbox(directory)
    const failed = await Effect.runPromise(Effect.flip(outbox.send(mail)))
    expect(failed._tag).toBe("MailSendError")
    expect(readdirSync(directory)).toEqual([`2026-11-28T12-00-00-000Z-000-${mail.verificationId}.eml`])
  })

  it("fails a message whose mail thread stopped as one to try again, and starts a new thread for the next", async () => {
    const directory = mkdtempSync(join(tmpdir(), "campusgate-outbox-"))
    const outbox = MailTransport.makeOutbox(directory)
    try {
      // The thread takes tens of milliseconds to start: it is stopped with the message in its hands.
      const sending = Effect.runPromise(Effect.flip(outbox.send(mail)))
      await outbox.close!()
      expect(await sending).toMatchObject({ _tag: "MailSendError", detail: "MailThreadExited", permanent: false })
      expect(readdirSync(directory)).toEqual([])
      await Effect.runPromise(outbox.send(mail))
      expect(readdirSync(directory).filter((name) => name.includes(mail.verificationId))).toHaveLength(1)
    } finally {
      await outbox.close!()
    }
  })
})
