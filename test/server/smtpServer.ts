/**
 * A real SMTP server on loopback for end-to-end tests (the `smtp-server`
 * package): it accepts every message, offers STARTTLS with a self-signed
 * certificate made for the test (for 127.0.0.1), and parses what it
 * receives with mailparser, so a test reads the code or link as the
 * recipient would. `close` takes it down (the daemon's sends then fail and
 * are retried); `startSmtp({ port })` brings one up on the same port again.
 */
import { simpleParser } from "mailparser"
import { generate } from "selfsigned"
import { SMTPServer } from "smtp-server"

export interface ReceivedMail {
  readonly to: string
  readonly subject: string
  readonly text: string
  /** Whether the session was upgraded to TLS before the message. */
  readonly secure: boolean
}

export interface TestCertificate {
  readonly key: string
  readonly cert: string
}

/** A self-signed certificate for 127.0.0.1 and localhost. */
export const makeCertificate = async (): Promise<TestCertificate> => {
  const pems = await generate([{ name: "commonName", value: "localhost" }], {
    keyType: "ec",
    algorithm: "sha256",
    extensions: [
      { name: "basicConstraints", cA: true },
      {
        name: "subjectAltName",
        altNames: [
          { type: 2, value: "localhost" },
          { type: 7, ip: "127.0.0.1" }
        ]
      }
    ]
  })
  return { key: pems.private, cert: pems.cert }
}

export interface TestSmtp {
  readonly port: number
  readonly received: Array<ReceivedMail>
  /** Resolves once `count` messages have arrived (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<Array<ReceivedMail>>
  close(): Promise<void>
}

export const startSmtp = async (
  certificate: TestCertificate,
  options: { port?: number; received?: Array<ReceivedMail> } = {}
): Promise<TestSmtp> => {
  const received = options.received ?? []
  const server = new SMTPServer({
    authOptional: true,
    key: certificate.key,
    cert: certificate.cert,
    logger: false,
    onData(stream, session, callback) {
      simpleParser(stream).then(
        (parsed) => {
          const to = parsed.to === undefined ? [] : Array.isArray(parsed.to) ? parsed.to : [parsed.to]
          received.push({
            to: to.map((address) => address.text).join(", "),
            subject: parsed.subject ?? "",
            text: parsed.text ?? "",
            secure: session.secure
          })
          callback()
        },
        (error: Error) => callback(error)
      )
    }
  })
  const port = await new Promise<number>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      const address = server.server.address()
      resolve(typeof address === "object" && address !== null ? address.port : 0)
    })
  })
  return {
    port,
    received,
    waitFor: async (count, timeoutMs = 15_000) => {
      const deadline = Date.now() + timeoutMs
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`${received.length} of ${count} messages arrived`)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      return received
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** The code in a message's text. */
export const codeOf = (mail: ReceivedMail): string => /^\s*(\d{6,10})\s*$/m.exec(mail.text)![1]!

/** The link in a message's text. */
export const linkOf = (mail: ReceivedMail): string => /(https?:\/\/\S+\/v\/\S+)/.exec(mail.text)![1]!
