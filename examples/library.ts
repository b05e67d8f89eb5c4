/**
 * Campusgate in-process, without Effect: load once, then validate
 * synchronously. Run it with `node examples/library.ts` after `npm install`.
 */
import { createCampusgate, TargetGroupNotFound } from "campusgate"

const cg = await createCampusgate({
  targetGroups: [
    {
      id: "eu-students",
      name: "Students in the EU and the UK",
      criteria: {
        institutions: { types: ["university", "college"], countries: ["DE", "FR", "NL", "GB", "IE"] },
        email: { rejectRoleAccounts: true }
      },
      examples: { valid: ["jane@ox.ac.uk"], invalid: ["jane@gmail.com"] }
    },
    {
      id: "partners",
      name: "Partner colleges",
      team: "acme",
      criteria: { domains: { allow: ["partner-college.org"] }, patterns: { allow: ["*.k12.ca.us"] } }
    }
  ],
  offers: [
    {
      id: "spring-sale",
      team: "acme",
      name: "Spring student sale",
      targetGroups: ["eu-students", "partners"],
      status: "active"
    }
  ]
})

const show = (label: string, value: unknown) => console.log(`${label}: ${JSON.stringify(value)}`)

const oxford = cg.validate("jane@ox.ac.uk", "eu-students")
show("jane@ox.ac.uk", { isValid: oxford.isValid, matchedDomain: oxford.matchedDomain })

const mit = cg.validate("john@mit.edu", "eu-students")
show("john@mit.edu", { isValid: mit.isValid, reasonCode: mit.reasonCode, reason: mit.reason })

const offer = cg.validateOffer("kim@partner-college.org", "spring-sale")
show("kim@partner-college.org", { isValid: offer.isValid, matchedTargetGroups: offer.matchedTargetGroups })

const many = cg.validateMany(["a@ox.ac.uk", "not-an-email", "b@gmail.com"], { targetGroupId: "eu-students" })
show(
  "validateMany",
  many.map((r) => r.reasonCode ?? "OK")
)

show("inspect mit.ed", cg.inspect("mit.ed").flags.suggestion)

try {
  cg.validate("jane@ox.ac.uk", "no-such-group")
} catch (error) {
  if (error instanceof TargetGroupNotFound) show("unknown group", error.message)
  else throw error
}

await cg.close()
