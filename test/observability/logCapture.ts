/** A log writing into memory, for tests that check what is logged. */
import { Log, type LogSettings } from "../../src/observability/Log.ts"

export const captureLog = (settings: LogSettings = { level: "info", logEmails: false }) => {
  const chunks: Array<string> = []
  const output = (text: string) => {
    chunks.push(text)
  }
  /** The lines written so far, parsed. */
  const lines = () =>
    chunks
      .join("")
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as Record<string, unknown>)
  return { chunks, lines, layer: Log.layer(settings, output), ...Log.make(settings, output) }
}
