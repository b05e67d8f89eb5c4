/** How the console writes numbers, shares, instants and durations: one way everywhere, in English. */

const counts = new Intl.NumberFormat("en", { maximumFractionDigits: 0 })
const percents = new Intl.NumberFormat("en", { style: "percent", maximumFractionDigits: 1 })

export const formatCount = (value: number): string => counts.format(value)

export const formatShare = (value: number): string => percents.format(value)

/** An ISO instant as `YYYY-MM-DD HH:MM UTC`, or an em dash for none. */
export const formatInstant = (iso: string | null | undefined): string => {
  if (iso === null || iso === undefined) return "—"
  const ms = Date.parse(iso)
  if (Number.isNaN(ms)) return iso
  return `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`
}

/** A duration in seconds as its largest unit and the next when not zero: `42 s`, `3 min 5 s`, `2 h`, `4 d 3 h`; `< 1 s` for less. */
export const formatDuration = (seconds: number): string => {
  if (seconds > 0 && seconds < 1) return "< 1 s"
  const units: ReadonlyArray<readonly [string, number]> = [
    ["d", 86_400],
    ["h", 3_600],
    ["min", 60],
    ["s", 1]
  ]
  const whole = Math.max(0, Math.floor(seconds))
  const first = units.findIndex(([, size]) => whole >= size)
  if (first === -1) return "0 s"
  const [name, size] = units[first]!
  const text = `${Math.floor(whole / size)} ${name}`
  const next = units[first + 1]
  if (next === undefined) return text
  const rest = Math.floor((whole % size) / next[1])
  return rest === 0 ? text : `${text} ${rest} ${next[0]}`
}

/** When a key expires, in words: `expires in 5 days` (rounded), `expires within a day`, `expired`. */
export const expiryText = (iso: string, now: number): string => {
  const days = (Date.parse(iso) - now) / 86_400_000
  if (days <= 0) return "expired"
  if (days < 1) return "expires within a day"
  const whole = Math.round(days)
  return `expires in ${whole} ${whole === 1 ? "day" : "days"}`
}
