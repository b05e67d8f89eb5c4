/**
 * The document an API-created resource is stored as: the YAML of the config
 * directory's files (encoded by the domain schemas, so it decodes back to
 * the same resource), under a comment saying where it came from and how to
 * manage it in git instead.
 */
import * as Schema from "effect/Schema"
import { stringify } from "yaml"
import { OFFERS_DIR, TARGET_GROUPS_DIR } from "../config/layout.ts"
import { Offer } from "../domain/Offer.ts"
import { TargetGroup } from "../domain/TargetGroup.ts"

const header = (directory: string): string =>
  `# Created through the Campusgate API. To manage it in git, move this file into the config directory's ${directory}/.\n`

const encodeTargetGroup = Schema.encodeSync(TargetGroup)
const encodeOffer = Schema.encodeSync(Offer)

export const targetGroupDocument = (group: TargetGroup): string =>
  header(TARGET_GROUPS_DIR) + stringify(encodeTargetGroup(group))

export const offerDocument = (offer: Offer): string => header(OFFERS_DIR) + stringify(encodeOffer(offer))
