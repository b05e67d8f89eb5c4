/**
 * Our HyperLogLog registers in Redis's own HLL format, so a Redis store
 * keeps unique emails in a native HLL (`PFMERGE` adds a delta, `PFCOUNT`
 * works for operators) while the daemon still estimates from the registers
 * exactly as one process does. Both use 2^14 registers; ours hold at most
 * 33, Redis's 6-bit registers up to 63, and merging is the same maximum.
 *
 * Format (Redis `hyperloglog.c`): a 16-byte header — "HYLL", the encoding
 * (0 dense, 1 sparse), three unused bytes, an 8-byte cached cardinality
 * whose top bit set means "stale" — then, dense, 6-bit registers packed
 * least significant bit first (12,288 bytes); sparse, runs of opcodes:
 * ZERO `00xxxxxx` (x+1 zero registers), XZERO `01xxxxxx yyyyyyyy`
 * ((x<<8|y)+1 zeros), VAL `1vvvvvxx` (x+1 registers of value v+1).
 */
import { REGISTER_COUNT } from "./HyperLogLog.ts"

const HEADER_BYTES = 16
const BITS = 6
const MAX_VALUE = (1 << BITS) - 1
export const DENSE_BYTES = HEADER_BYTES + (REGISTER_COUNT * BITS) / 8

/** `registers` as a dense Redis HLL string (its cached cardinality marked stale). */
export const toRedisHll = (registers: Uint8Array): Buffer => {
  const bytes = Buffer.alloc(DENSE_BYTES)
  bytes.write("HYLL", 0, "latin1")
  bytes[15] = 0x80
  for (let i = 0; i < REGISTER_COUNT; i++) {
    const value = Math.min(registers[i]!, MAX_VALUE)
    if (value === 0) continue
    const bit = i * BITS
    const at = HEADER_BYTES + (bit >> 3)
    const shift = bit & 7
    bytes[at] = bytes[at]! | ((value << shift) & 0xff)
    if (shift > 8 - BITS) bytes[at + 1] = bytes[at + 1]! | (value >> (8 - shift))
  }
  return bytes
}

/** The registers of a Redis HLL string, dense or sparse; throws on anything else. */
export const fromRedisHll = (bytes: Uint8Array): Uint8Array => {
  if (bytes.length < HEADER_BYTES || Buffer.from(bytes.subarray(0, 4)).toString("latin1") !== "HYLL") {
    throw new Error("not a Redis HyperLogLog")
  }
  const registers = new Uint8Array(REGISTER_COUNT)
  if (bytes[4] === 0) {
    if (bytes.length !== DENSE_BYTES) throw new Error("a dense Redis HyperLogLog of the wrong size")
    for (let i = 0; i < REGISTER_COUNT; i++) {
      const bit = i * BITS
      const at = HEADER_BYTES + (bit >> 3)
      const shift = bit & 7
      const low = bytes[at]! >> shift
      const high = shift > 8 - BITS ? bytes[at + 1]! << (8 - shift) : 0
      registers[i] = (low | high) & MAX_VALUE
    }
    return registers
  }
  let index = 0
  for (let at = HEADER_BYTES; at < bytes.length; at++) {
    const op = bytes[at]!
    if ((op & 0xc0) === 0x00) index += (op & 0x3f) + 1
    else if ((op & 0xc0) === 0x40) index += (((op & 0x3f) << 8) | bytes[++at]!) + 1
    else {
      const value = ((op >> 2) & 0x1f) + 1
      const run = (op & 0x03) + 1
      for (let k = 0; k < run; k++) registers[index++] = value
    }
  }
  if (index !== REGISTER_COUNT) throw new Error("a sparse Redis HyperLogLog that does not cover every register")
  return registers
}
