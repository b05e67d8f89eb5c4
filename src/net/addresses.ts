/**
 * Which IP addresses an outbound request made on a client's behalf (a job
 * callback, a webhook) may reach: public unicast only. Refused, so that a
 * callback URL cannot make the daemon scan or call its own network:
 * loopback, unspecified, private (RFC 1918, IPv6 unique-local fc00::/7),
 * link-local (169.254/16 — cloud metadata lives there — and fe80::/10),
 * shared address space for carrier-grade NAT (100.64/10), multicast,
 * reserved and documentation ranges (the IANA special-purpose registries,
 * RFC 6890), and the IPv6 forms that carry an IPv4 address to elsewhere
 * (NAT64 64:ff9b::/96 and 64:ff9b:1::/48, 6to4 2002::/16, Teredo
 * 2001::/32). An IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) is judged
 * as the IPv4 address it maps.
 */
import { BlockList, isIP } from "node:net"

const refused = new BlockList()
for (const [network, prefix] of [
  ["0.0.0.0", 8], // "this network", unspecified
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // shared address space (carrier-grade NAT)
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local, cloud metadata
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation
  ["192.88.99.0", 24], // 6to4 relay anycast
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4] // reserved, and the limited broadcast address
] as const) {
  refused.addSubnet(network, prefix, "ipv4")
}
for (const [network, prefix] of [
  ["::", 128], // unspecified
  ["::1", 128], // loopback
  ["::", 96], // IPv4-compatible (deprecated)
  ["64:ff9b::", 96], // NAT64
  ["64:ff9b:1::", 48], // local-use NAT64
  ["100::", 64], // discard-only
  ["2001::", 32], // Teredo
  ["2001:db8::", 32], // documentation
  ["2002::", 16], // 6to4
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated)
  ["ff00::", 8] // multicast
] as const) {
  refused.addSubnet(network, prefix, "ipv6")
}

/** Whether `address` (an IPv4 or IPv6 literal, without brackets) is one outbound requests may reach. */
export const isPublicAddress = (address: string): boolean => {
  const family = isIP(address)
  if (family === 0) return false
  return !refused.check(address, family === 4 ? "ipv4" : "ipv6")
}

/** A URL's host as an IP literal (brackets dropped), or undefined for a name. */
export const ipLiteralOf = (hostname: string): string | undefined => {
  const bare = hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname
  return isIP(bare) === 0 ? undefined : bare
}
