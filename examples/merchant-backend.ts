/**
 * A shop's backend trusting a Campusgate eligibility token without calling
 * back: the token (from the verification, or the link's redirect) is
 * checked offline against the issuer's public keys — a JWKS fetched once
 * from `GET /.well-known/jwks.json` and kept — and for the audience the
 * shop expects: its offer (and team). A token for another offer, another
 * team, or a target group does not pass.
 *
 *   node examples/merchant-backend.ts TOKEN JWKS_FILE OFFER_ID [TEAM]
 *
 * Without arguments it plays both sides in one process: Campusgate (the
 * library, messages captured in memory) verifies jane@ox.ac.uk for an offer,
 * and the backend checks the token it yields, then a tampered copy.
 */
import { readFileSync } from "node:fs"
import { createCampusgate, type OutgoingMail } from "campusgate"
import { EligibilityTokenError, verifyEligibilityToken } from "campusgate/token"

const check = async (
  token: string,
  jwks: Parameters<typeof verifyEligibilityToken>[1]["jwks"],
  offerId: string,
  team?: string
) => {
  try {
    const claims = await verifyEligibilityToken(token, { jwks, offerId, team })
    console.log(
      `eligible: offer ${claims.offer?.id}, ${claims.institution?.name} (${claims.institution?.country}), person ${claims.sub.slice(0, 8)}…, until ${new Date(claims.exp * 1000).toISOString().slice(0, 10)}`
    )
  } catch (error) {
    if (!(error instanceof EligibilityTokenError)) throw error
    console.log(`refused: ${error.reason} (${error.message})`)
  }
}

const [token, jwksFile, offerId, team] = process.argv.slice(2)
if (token !== undefined && jwksFile !== undefined && offerId !== undefined) {
  await check(token, JSON.parse(readFileSync(jwksFile, "utf8")), offerId, team)
} else {
  const sent: Array<OutgoingMail> = []
  const campusgate = await createCampusgate({
    targetGroups: [{ id: "uk", name: "UK students", criteria: { institutions: { countries: ["GB"] } } }],
    offers: [{ id: "spring-sale", team: "acme", name: "Spring sale", targetGroups: ["uk"], status: "active" }],
    verification: { send: async (mail) => void sent.push(mail) }
  })
  const started = await campusgate.verifications.start({ email: "jane@ox.ac.uk", offerId: "spring-sale" })
  if (!("started" in started)) throw new Error("jane@ox.ac.uk should be eligible")
  while (sent.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
  const code = /^\s*(\d{6,10})\s*$/m.exec(sent[0]!.text)![1]!
  const verified = await campusgate.verifications.confirm(started.started.id, code)
  const jwks = await campusgate.verifications.jwks()
  await campusgate.close()
  const issued = verified.eligibility!.token
  await check(issued, jwks, "spring-sale", "acme")
  await check(issued, jwks, "another-offer")
  await check(issued, jwks, "spring-sale", "globex")
  const [header, payload, signature] = issued.split(".")
  const tampered = JSON.parse(Buffer.from(payload!, "base64url").toString())
  tampered.offer.id = "everything"
  await check(
    `${header}.${Buffer.from(JSON.stringify(tampered)).toString("base64url")}.${signature}`,
    jwks,
    "everything"
  )
}
