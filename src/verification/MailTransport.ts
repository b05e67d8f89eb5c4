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
 * nodemailer loads with the first message, not at every daemon's start
 * (its own chunk of the daemon's bundle).
 */
import { chmod, mkdir, open, rename, rm } from "node:fs/promises"
import { join, resolve } from "node:path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { MailSettings } from "../config/Settings.ts"
import { PRIVATE_DIRECTORY, PRIVATE_FILE, removeTemporaryFiles } from "../store/atomicWrite.ts"

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
}

const failureOf = (error: unknown): MailSendError => {
  const { code, responseCode } = error as { code?: unknown; responseCode?: unknown }
  const reply = typeof responseCode === "number" ? responseCode : undefined
  const name = typeof code === "string" ? code : error instanceof Error ? error.name : "Error"
  return new MailSendError({
    detail: reply === undefined ? name : `${name} ${reply}`,
    permanent: reply !== undefined && reply >= 500 && reply < 600
  })
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

/** nodemailer's transport made by `options`, once, when the first message needs it. */
const lazyTransport = (options: Parameters<Nodemailer["createTransport"]>[0]) => {
  let made: Promise<ReturnType<Nodemailer["createTransport"]>> | undefined
  return () => (made ??= import("nodemailer").then(({ default: nodemailer }) => nodemailer.createTransport(options)))
}

type Nodemailer = typeof import("nodemailer")["default"]

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
    const transport = lazyTransport({
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
    })
    return {
      description: `smtp://${options.host}:${options.port}`,
      send: (mail) =>
        Effect.tryPromise({
          try: async () =>
            (await transport()).sendMail({
              from: mail.from,
              to: mail.to,
              subject: mail.subject,
              text: mail.text,
              html: mail.html
            }),
          catch: failureOf
        }).pipe(Effect.asVoid)
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
    const builder = lazyTransport({ streamTransport: true, buffer: true, newline: "unix" })
    let sequence = 0
    removeTemporaryFiles(directory)
    // The directory is made once, and again only if it disappears.
    let made: Promise<unknown> | undefined
    const directoryMade = () =>
      (made ??= mkdir(directory, { recursive: true, mode: PRIVATE_DIRECTORY }).then(() =>
        chmod(directory, PRIVATE_DIRECTORY)
      ))
    return {
      description: directory,
      send: (mail) =>
        Effect.tryPromise({
          try: async () => {
            const built = await (await builder()).sendMail({
              from: mail.from,
              to: mail.to,
              subject: mail.subject,
              text: mail.text,
              html: mail.html
            })
            // Sorts by time, then by order within one millisecond.
            const name = `${new Date().toISOString().replace(/[:.]/g, "-")}-${String(sequence++ % 1000).padStart(3, "0")}-${mail.verificationId}.eml`
            const file = join(directory, name)
            // Written off the event loop: a temporary file, flushed, renamed into place (readers never see half).
            const temporary = join(directory, `.${name}.tmp`)
            await directoryMade()
            const handle = await open(temporary, "wx", PRIVATE_FILE).catch(async (error: NodeJS.ErrnoException) => {
              if (error.code !== "ENOENT") throw error
              made = undefined
              await directoryMade()
              return open(temporary, "wx", PRIVATE_FILE)
            })
            try {
              try {
                await handle.writeFile(built.message as Buffer)
                await handle.sync()
              } finally {
                await handle.close()
              }
              await rename(temporary, file)
            } catch (error) {
              await rm(temporary, { force: true })
              throw error
            }
            onWritten(file)
          },
          catch: failureOf
        })
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
