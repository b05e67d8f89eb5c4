/**
 * The email policy lists (disposable domains, free mail providers, role
 * accounts) as an Effect service, loaded from the data compiled at build time.
 */
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import { type EmailLists, loadBuiltInEmailLists, loadEmailLists } from "./policy/EmailLists.ts"
import type { EmailListsData } from "./policy/EmailListsData.ts"

export class EmailPolicyLists extends Context.Service<EmailPolicyLists, { readonly lists: EmailLists }>()(
  "campusgate/engine/EmailPolicyLists"
) {
  static readonly layer: Layer.Layer<EmailPolicyLists> = Layer.sync(EmailPolicyLists, () =>
    EmailPolicyLists.of({ lists: loadBuiltInEmailLists() })
  )

  static readonly layerFromData = (data: EmailListsData): Layer.Layer<EmailPolicyLists> =>
    Layer.sync(EmailPolicyLists, () => EmailPolicyLists.of({ lists: loadEmailLists(data) }))
}
