/**
 * The mail thread of `MailTransport.ts` (a worker-thread module): nodemailer
 * composes each message here, and sends it over SMTP or writes it to the
 * outbox, so neither the composing nor the sending runs on the thread that
 * answers requests. Composing one message with nodemailer took ~1.6 ms of
 * CPU, more than the rest of a verification's start (`npm run
 * bench:verifications`: the p99 a start adds over a plain validation).
 *
 * One thread per transport, told its transport at start (`MailThreadData`);
 * each request names its message and is answered once: sent (with the
 * outbox file written), or the failure (`MailThreadFailure`: the error
 * class and SMTP reply code only, never a server's text, which can quote
 * the address). nodemailer loads with the first message.
 */
import { chmod, mkdir, open, rename, rm } from "node:fs/promises"
import { join } from "node:path"
import { parentPort, workerData } from "node:worker_threads"
import { PRIVATE_DIRECTORY, PRIVATE_FILE } from "../store/atomicWrite.ts"
import type { MailThreadAnswer, MailThreadData, MailThreadFailure, MailThreadRequest } from "./MailTransport.ts"

type Nodemailer = typeof import("nodemailer")["default"]
type Transporter = ReturnType<Nodemailer["createTransport"]>

const port = parentPort!
const data = workerData as MailThreadData

const failureOf = (error: unknown): MailThreadFailure => {
  const { code, responseCode } = error as { code?: unknown; responseCode?: unknown }
  const reply = typeof responseCode === "number" ? responseCode : undefined
  const name = typeof code === "string" ? code : error instanceof Error ? error.name : "Error"
  return {
    detail: reply === undefined ? name : `${name} ${reply}`,
    permanent: reply !== undefined && reply >= 500 && reply < 600
  }
}

let transporter: Promise<Transporter> | undefined
const transport = () =>
  (transporter ??= import("nodemailer").then(({ default: nodemailer }) =>
    nodemailer.createTransport(
      data.kind === "smtp" ? data.options : { streamTransport: true, buffer: true, newline: "unix" }
    )
  ))

// The outbox directory is made once, and again only if it disappears.
let made: Promise<unknown> | undefined
const directoryMade = (directory: string) =>
  (made ??= mkdir(directory, { recursive: true, mode: PRIVATE_DIRECTORY }).then(() =>
    chmod(directory, PRIVATE_DIRECTORY)
  ))

/** Writes `message` as `directory/name`: a temporary file, flushed, renamed into place (readers never see half). */
const writeToOutbox = async (directory: string, name: string, message: Buffer) => {
  const file = join(directory, name)
  const temporary = join(directory, `.${name}.tmp`)
  await directoryMade(directory)
  const handle = await open(temporary, "wx", PRIVATE_FILE).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code !== "ENOENT") throw error
    made = undefined
    await directoryMade(directory)
    return open(temporary, "wx", PRIVATE_FILE)
  })
  try {
    try {
      await handle.writeFile(message)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await rename(temporary, file)
  } catch (error) {
    await rm(temporary, { force: true })
    throw error
  }
  return file
}

const handle = async (request: MailThreadRequest): Promise<MailThreadAnswer> => {
  try {
    const { from, to, subject, text, html } = request.mail
    const sent = await (await transport()).sendMail({ from, to, subject, text, html })
    if (data.kind === "smtp" || request.name === undefined) return { id: request.id }
    return { id: request.id, file: await writeToOutbox(data.directory, request.name, sent.message as Buffer) }
  } catch (error) {
    return { id: request.id, failure: failureOf(error) }
  }
}

port.on("message", (request: MailThreadRequest) => {
  void handle(request).then((answer) => port.postMessage(answer))
})
