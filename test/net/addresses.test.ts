import { describe, expect, it } from "vitest"
import { ipLiteralOf, isPublicAddress } from "../../src/net/addresses.ts"

describe("isPublicAddress", () => {
  it("refuses loopback, unspecified, private, link-local, CGNAT, multicast, reserved and documentation addresses", () => {
    for (const address of [
      "127.0.0.1",
      "127.255.0.9",
      "0.0.0.0",
      "10.1.2.3",
      "172.16.0.1",
      "172.31.255.255",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "224.0.0.1",
      "240.0.0.1",
      "255.255.255.255",
      "192.0.2.1",
      "198.18.0.1",
      "::",
      "::1",
      "fc00::1",
      "fd12:3456::1",
      "fe80::1",
      "ff02::1",
      "2001:db8::1",
      "::ffff:127.0.0.1",
      "::ffff:7f00:1",
      "::ffff:10.0.0.1",
      "64:ff9b::7f00:1",
      "2002:7f00:1::1"
    ]) {
      expect(isPublicAddress(address), address).toBe(false)
    }
  })

  it("accepts public unicast addresses, IPv4 mapped into IPv6 included", () => {
    for (const address of ["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "::ffff:8.8.8.8"]) {
      expect(isPublicAddress(address), address).toBe(true)
    }
  })

  it("is false for anything that is not an IP address", () => {
    for (const text of ["localhost", "example.com", "", "1.2.3", "[::1]"]) expect(isPublicAddress(text)).toBe(false)
  })
})

describe("ipLiteralOf", () => {
  it("reads the host of a URL as URL parsing normalised it: decimal, hex and octal forms are IPv4", () => {
    for (const host of ["2130706433", "0x7f000001", "017700000001", "127.1"]) {
      expect(ipLiteralOf(new URL(`http://${host}/`).hostname)).toBe("127.0.0.1")
    }
    expect(ipLiteralOf(new URL("http://[::ffff:127.0.0.1]/").hostname)).toBe("::ffff:7f00:1")
    expect(ipLiteralOf("hooks.example.com")).toBeUndefined()
  })
})
