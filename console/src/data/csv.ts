/**
 * The CSV export of an offer's daily figures: RFC 4180 (CRLF line ends, a
 * header row, fields quoted when they hold a comma, a quote or a line
 * break), one row per day of the window shown, quiet days as zeros, so a
 * spreadsheet gets exactly what the chart draws.
 */
import type { DayCounts } from "./days.ts"

/** One CSV field: quoted (with quotes doubled) when it needs to be. */
export const csvField = (value: string | number): string => {
  const text = String(value)
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

export const csvLine = (fields: ReadonlyArray<string | number>): string => `${fields.map(csvField).join(",")}\r\n`

export const DAILY_CSV_HEADER = ["date", "validations", "eligible", "ineligible"] as const

export const dailyCsv = (days: ReadonlyArray<DayCounts>): string =>
  csvLine(DAILY_CSV_HEADER) +
  days.map((day) => csvLine([day.date, day.validations, day.eligible, day.ineligible])).join("")

/** The download's file name: the offer, the last day and the window, e.g. `acme-spring-2026-05-31-30d.csv`. */
export const dailyCsvName = (offerId: string, today: string, days: number): string =>
  `${offerId.replace(/[^A-Za-z0-9._-]/g, "_")}-${today}-${days}d.csv`
