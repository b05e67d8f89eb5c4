/**
 * The Target groups screen: each group the team sees (its own and the
 * shared ones) with its criteria in plain words, and "try an email": the
 * verdict for one address with the explanation per criterion (format,
 * domain, geography, organisation type, custom list, email policy) and
 * the institution found, as `POST /validate/target-group` with
 * `explain: true` answers them.
 */
import { useRef, useState } from "preact/hooks"
import { listAll } from "../api.ts"
import type { Explanation, TargetGroup, Validation } from "../apiTypes.ts"
import { Badge, ErrorNote, Fact, Options, Show, Table } from "../components/common.tsx"
import { useScope, useSigned } from "../context.ts"
import { countryName, describeCriteria } from "../data/criteria.ts"
import { useLoad, useTitle, useWrite } from "../hooks.ts"

type Criterion = Explanation["criteria"][number]

const CRITERION_NAMES: Record<Criterion["criterion"], string> = {
  format: "Format",
  domain: "Domain",
  geography: "Geography",
  organisationType: "Organisation type",
  customList: "Custom list",
  emailPolicy: "Email policy"
}

const OUTCOME_WORDS: Record<Criterion["outcome"], string> = {
  pass: "passed",
  fail: "failed",
  "not-applicable": "not applicable"
}

/** What Campusgate knows of the host: the institution, or the organisation that is not one. */
const HostFacts = (props: { readonly explanation: Explanation }) => {
  const { institution, organization } = props.explanation
  if (institution !== null)
    return (
      <dl class="facts" data-institution={institution.id}>
        <Fact term="Name">{institution.name ?? "(no name in the data)"}</Fact>
        <Fact term="Domain">
          <span class="mono">{institution.id}</span>
          {institution.matchedDomain === institution.id ? null : (
            <span class="muted"> (matched {institution.matchedDomain})</span>
          )}
        </Fact>
        <Fact term="Country">{institution.country === null ? "unknown" : countryName(institution.country)}</Fact>
        {institution.region === null ? null : <Fact term="Region">{institution.region}</Fact>}
        <Fact term="Type">{institution.type}</Fact>
        <Fact term="Serves">{institution.role}</Fact>
        <Fact term="Found by">{institution.rule}</Fact>
        {institution.ror === null ? null : (
          <Fact term="ROR">
            <span class="mono">{institution.ror}</span>
          </Fact>
        )}
      </dl>
    )
  if (organization !== null)
    return (
      <p class="note" data-institution="none" data-organization={organization.kind}>
        Not an educational institution: {organization.name ?? "an organisation"} ({organization.kind}
        {organization.country === null ? "" : `, ${countryName(organization.country)}`}).
      </p>
    )
  return (
    <p class="note" data-institution="none">
      No institution Campusgate knows.
    </p>
  )
}

const Verdict = (props: { readonly result: Validation }) => {
  const { result } = props
  const explanation = result.explanation
  return (
    <div class="verdict" data-valid={String(result.isValid)}>
      <p class="verdict-line">
        <Badge status={result.isValid ? "eligible" : "ineligible"} /> <span class="mono">{result.email}</span> for{" "}
        {result.targetGroup.name}
        {result.reasonCode === undefined ? null : (
          <>
            : {result.reason} <span class="mono muted">({result.reasonCode})</span>
          </>
        )}
      </p>
      {explanation === undefined ? null : (
        <>
          <Table
            class="explanation"
            caption="Criterion by criterion"
            captionShown
            columns={["Criterion", "Outcome", "Why"]}
          >
            {explanation.criteria.map((entry) => (
              <tr key={entry.criterion} data-criterion={entry.criterion} data-outcome={entry.outcome}>
                <th scope="row">{CRITERION_NAMES[entry.criterion]}</th>
                <td>
                  <Badge status={OUTCOME_WORDS[entry.outcome]} />
                </td>
                <td>{entry.detail}</td>
              </tr>
            ))}
          </Table>
          <h3>Institution found</h3>
          <HostFacts explanation={explanation} />
        </>
      )}
    </div>
  )
}

const TryEmail = (props: { readonly groups: ReadonlyArray<TargetGroup> }) => {
  const { api } = useSigned()
  const email = useRef<HTMLInputElement>(null)
  const [group, setGroup] = useState(props.groups[0]?.id ?? "")
  const { busy, error, run } = useWrite()
  const [result, setResult] = useState<Validation | undefined>(undefined)

  const submit = async (event: Event) => {
    event.preventDefault()
    const address = email.current?.value.trim() ?? ""
    if (address === "" || group === "") return
    await run(() =>
      api
        .request<Validation>("/api/v1/validate/target-group", {
          method: "POST",
          json: { email: address, targetGroupId: group, explain: true }
        })
        .then(setResult, (failure: unknown) => {
          // A refusal leaves no verdict shown: the last one was for another address.
          setResult(undefined)
          throw failure
        })
    )
  }

  return (
    <section aria-labelledby="try-heading" class="panel">
      <h2 id="try-heading">Try an email</h2>
      <form class="toolbar" onSubmit={submit}>
        <div class="field grow">
          <label for="try-email">Email</label>
          <input id="try-email" ref={email} type="email" autocomplete="off" spellcheck={false} required />
        </div>
        <div class="field">
          <label for="try-group">Target group</label>
          <select id="try-group" value={group} onChange={(event) => setGroup(event.currentTarget.value)}>
            <Options choices={props.groups.map((option) => [option.id, option.name])} />
          </select>
        </div>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? "Checking…" : "Try"}
        </button>
      </form>
      <div aria-live="polite">
        {error === undefined ? null : <ErrorNote error={error} />}
        {result === undefined ? null : <Verdict result={result} />}
      </div>
    </section>
  )
}

export const TargetGroups = () => {
  const { api } = useSigned()
  const mayTry = useScope("validate:target-groups")
  const [loaded] = useLoad(() => listAll<TargetGroup>(api, "/api/v1/target-groups"), "target-groups")

  useTitle("Target groups")

  return (
    <>
      <h1 tabIndex={-1}>Target groups</h1>
      <Show loaded={loaded} what="the target groups">
        {(groups) => (
          <>
            {mayTry && groups.length > 0 ? <TryEmail groups={groups} /> : null}
            <ul class="cards">
              {groups.map((group) => (
                <li key={group.id} class="card" data-target-group={group.id}>
                  <h2>{group.name}</h2>
                  <p class="muted">
                    <span class="mono">{group.id}</span> · {group.team === undefined ? "shared" : `team ${group.team}`}{" "}
                    · {group.source === "api" ? "made through the API" : "in the config directory"}
                  </p>
                  {group.description === undefined ? null : <p>{group.description}</p>}
                  <dl class="criteria">
                    {describeCriteria(group.criteria).map((line) => (
                      <Fact key={line.criterion} term={line.label}>
                        {line.text}
                      </Fact>
                    ))}
                  </dl>
                </li>
              ))}
            </ul>
          </>
        )}
      </Show>
    </>
  )
}
