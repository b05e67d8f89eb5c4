/**
 * Reading the outbox directory (`campusgate outbox`): the latest `.eml`
 * files, newest last, decoded with mailparser so a person reads the code
 * or the link as the recipient would. The files are the messages exactly
 * as SMTP would have sent them.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { simpleParser } from "mailparser"

export interface OutboxMessage {
  readonly file: string
  readonly date: string | undefined
  readonly to: string
  readonly subject: string
  readonly text: string
}

/** The names of the outbox's messages, oldest first (an absent directory has none). */
export const outboxFiles = (directory: string): Array<string> => {
  try {
    return readdirSync(directory)
      .filter((name) => name.endsWith(".eml") && !name.startsWith("."))
      .sort()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return []
    throw error
  }
}

/** The `count` latest messages, oldest first, optionally only those of one verification. */
export const readOutbox = async (
  directory: string,
  count: number,
  verificationId?: string | undefined
): Promise<Array<OutboxMessage>> => {
  const names = outboxFiles(directory).filter((name) => verificationId === undefined || name.includes(verificationId))
  return Promise.all(
    names.slice(Math.max(0, names.length - count)).map(async (name) => {
      const file = join(directory, name)
      const parsed = await simpleParser(readFileSync(file))
      const to =
        parsed.to === undefined
          ? ""
          : (Array.isArray(parsed.to) ? parsed.to : [parsed.to]).map((address) => address.text).join(", ")
      return { file, date: parsed.date?.toISOString(), to, subject: parsed.subject ?? "", text: parsed.text ?? "" }
    })
  )
}
