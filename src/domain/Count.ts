/** A count: a whole number, zero or more (progress, counters, byte offsets). */
import * as Schema from "effect/Schema"

export const Count = Schema.Int.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(0)))
