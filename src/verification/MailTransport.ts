/**
 * How a verification message leaves: the port the send queue calls, with
 * three adapters —
 * - `smtp`: nodemailer over SMTP (STARTTLS required, implicit TLS, or
 *   plain for loopback), with the user from `campusgate.yaml` and the
 *   password from `CAMPUSGATE_SMTP_PASSWORD`;
 * - `outbox`: each message as an `.eml` file in a directory (the embedded
 *   default, so the first run needs no mail server), built by nodemailer
 *   exactly as SMTP would send it, written atomically, one log line each
 *   (`outboxDirectory`: where, for the daemon, the library and `campusgate outbox`);
 * - `memory`: messages kept in a list (the library's tests, app tests).
 * A failure says whether trying again can help (`permanent`: the server
 * refused the message with a 5xx); its detail is the error class and SMTP
 * reply code only — a server's reply text can quote the address.
 * nodemailer composes and sends on a mail thread of the transport's own
 * (`mailThread.ts`), started with the first message, never on the thread
 * that answers requests: composing one message took ~1.6 ms of its CPU.
 */
import { resolve } from "node:path"
import { Worker } from "node:worker_threads"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { MailSettings } from "../config/Settings.ts"
import { removeTemporaryFiles } from "../store/atomicWrite.ts"

export interface OutgoingMail {
  /** Names the message (outbox file names, logs); never an address. */
  readonly verificationId: string
  readonly from: string
  readonly to: string
  readonly subject: string
  readonly text: string
  readonly html: string
}

export class MailSendError extends Schema.TaggedError<MailSendError>()("MailSendError", {
  /** The error class and SMTP reply code, e.g. `ECONNECTION` or `EENVELOPE 550`; never the server's text. */
  detail: Schema.String,
  /** Retrying cannot help (the server refused the message). */
  permanent: Schema.Boolean
}) {
  override get message(): string {
    return `The message was not sent: ${this.detail}`
  }
}

export interface MailTransportService {
  /** What messages go to, for the log: `smtp://host:port` or the outbox directory. */
  readonly description: string
  send(mail: OutgoingMail): Effect.Effect<void, MailSendError>
  /** Stops what it runs (a mail thread), once the messages are no longer its to send. */
  readonly close?: (() => Promise<void>) | undefined
}

export interface SmtpOptions {
  readonly host: string
  readonly port: number
  readonly security: "starttls" | "tls" | "none"
  readonly user?: string | undefined
  readonly password?: string | undefined
  /** Certificate authorities to trust besides the system's (PEM). */
  readonly ca?: string | undefined
  /** How long one attempt may take (default 30 s). */
  readonly timeoutMs?: number | undefined
}

export const OUTBOX_DIR = "outbox"

/** What a mail thread is told at start: its transport (`mailThread.ts`). */
export type MailThreadData =
  | { readonly kind: "smtp"; readonly options: Record<string, unknown> }
  | { readonly kind: "outbox"; readonly directory: string }

/** A message for the mail thread; `name`: its file in the outbox. */
export interface MailThreadRequest {
  readonly id: number
  readonly mail: OutgoingMail
  readonly name: string | undefined
}

/** Why the mail thread did not send a message: `MailSendError`'s fields. */
export interface MailThreadFailure {
  readonly detail: string
  readonly permanent: boolean
}

/** The mail thread's answer to one request: sent (with the outbox file written), or why not. */
export interface MailThreadAnswer {
  readonly id: number
  readonly file?: string | undefined
  readonly failure?: MailThreadFailure | undefined
}

const threadUrl = new URL(import.meta.url.endsWith(".ts") ? "./mailThread.ts" : "./mailThread.js", import.meta.url)

/**
 * The mail thread of one transport, started with its first message and
 * again after it stopped; it keeps the process alive only while a message
 * is in its hands. A thread that stops fails its messages for now (the
 * send queue retries them).
 */
const mailThread = (data: MailThreadData) => {
  let worker: Worker | undefined
  let nextId = 0
  const waiting = new Map<number, (answer: MailThreadAnswer) => void>()
  const failAll = (detail: string) => {
    const answers = [...waiting]
    waiting.clear()
    for (const [id, resume] of answers) resume({ id, failure: { detail, permanent: false } })
  }
  const started = (): Worker => {
    if (worker !== undefined) return worker
    const made = new Worker(threadUrl, { workerData: data })
    made.unref()
    made.on("message", (answer: MailThreadAnswer) => {
      const resume = waiting.get(answer.id)
      if (resume === undefined) return
      waiting.delete(answer.id)
      if (waiting.size === 0) made.unref()
      resume(answer)
    })
    made.on("error", (error) => {
      if (worker === made) worker = undefined
      failAll(error.name)
    })
    made.on("exit", () => {
      if (worker === made) worker = undefined
      failAll("MailThreadExited")
    })
    worker = made
    return made
  }
  return {
    send: (mail: OutgoingMail, name: string | undefined): Effect.Effect<string | undefined, MailSendError> =>
      Effect.callback<string | undefined, MailSendError>((resume) => {
        const thread = started()
        const id = nextId++
        if (waiting.size === 0) thread.ref()
        waiting.set(id, (answer) =>
          resume(
            answer.failure === undefined ? Effect.succeed(answer.file) : Effect.fail(new MailSendError(answer.failure))
          )
        )
        thread.postMessage({ id, mail, name } satisfies MailThreadRequest)
      }),
    close: async () => {
      const stopping = worker
      worker = undefined
      if (stopping !== undefined) await stopping.terminate()
    }
  }
}

/** Where the outbox is for a config: `verification.mail.outboxDir` (relative to the config directory), else `<data>/outbox`. */
export const outboxDirectory = (configDir: string, dataDir: string, outboxDir: string | undefined): string =>
  outboxDir === undefined ? resolve(dataDir, OUTBOX_DIR) : resolve(configDir, outboxDir)

/** The SMTP options of the mail settings, with the password from the environment. */
export const smtpOptions = (
  smtp: NonNullable<MailSettings["smtp"]>,
  password: string | undefined,
  ca: string | undefined
): SmtpOptions => ({ host: smtp.host, port: smtp.port, security: smtp.security, user: smtp.user, password, ca })

export class MailTransport extends Context.Service<MailTransport, MailTransportService>()(
  "campusgate/verification/MailTransport"
) {
  static readonly makeSmtp = (options: SmtpOptions): MailTransportService => {
    const timeout = options.timeoutMs ?? 30_000
    const thread = mailThread({
      kind: "smtp",
      options: {
        host: options.host,
        port: options.port,
        secure: options.security === "tls",
        requireTLS: options.security === "starttls",
        ignoreTLS: options.security === "none",
        ...(options.user === undefined ? {} : { auth: { user: options.user, pass: options.password ?? "" } }),
        ...(options.ca === undefined ? {} : { tls: { ca: options.ca } }),
        connectionTimeout: timeout,
        greetingTimeout: timeout,
        socketTimeout: timeout
      }
    })
    return {
      description: `smtp://${options.host}:${options.port}`,
      send: (mail) => Effect.asVoid(thread.send(mail, undefined)),
      close: thread.close
    }
  }

  /**
   * Writes each message to `directory` as `<time>-<verification id>.eml`
   * (private: `PRIVATE_FILE` in a `PRIVATE_DIRECTORY`); `onWritten` is told
   * the file. A write that fails (a full disk) leaves nothing behind, and
   * the temporary files of one a crash cut short are removed when the
   * outbox opens.
   */
  static readonly makeOutbox = (
    directory: string,
    onWritten: (file: string) => void = () => {}
  ): MailTransportService => {
    const thread = mailThread({ kind: "outbox", directory })
    let sequence = 0
    removeTemporaryFiles(directory)
    return {
      description: directory,
      send: (mail) =>
        Effect.suspend(() => {
          // Sorts by time, then by order within one millisecond.
          const name = `${new Date().toISOString().replace(/[:.]/g, "-")}-${String(sequence++ % 1000).padStart(3, "0")}-${mail.verificationId}.eml`
          return thread.send(mail, name)
        }).pipe(Effect.map((file) => onWritten(file!))),
      close: thread.close
    }
  }

  /** Keeps messages in `sent`; `failWith` makes the next sends fail (tests of retries). */
  static readonly makeMemory = (): MailTransportService & {
    readonly sent: Array<OutgoingMail>
    failWith: MailSendError | undefined
  } => {
    const memory = {
      description: "memory",
      sent: [] as Array<OutgoingMail>,
      failWith: undefined as MailSendError | undefined,
      send: (mail: OutgoingMail) =>
        Effect.suspend(() => {
          if (memory.failWith !== undefined) return Effect.fail(memory.failWith)
          memory.sent.push(mail)
          return Effect.void
        })
    }
    return memory
  }

  static readonly layer = (service: MailTransportService): Layer.Layer<MailTransport> =>
    Layer.succeed(MailTransport, service)
}
