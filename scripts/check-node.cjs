/**
 * `preinstall`: stops an install on a Node.js older than `engines.node` with
 * one line that says which version is needed, before anything else fails
 * less clearly (the build runs TypeScript files directly, which older Node
 * refuses with "Unknown file extension .ts").
 *
 * It must itself run on any old Node, so it is CommonJS written in the
 * JavaScript of Node 0.10: no arrow functions, no `let`, no template strings.
 * The rule is `engines.node` of package.json, read here, never restated
 * (`devEngines.runtime` repeats it so that npm 10.8 and later refuse before
 * installing anything; a test keeps the two equal). npm runs a project's own
 * preinstall after installing its dependencies, so this line is the last an
 * older npm prints, not the first.
 */
var path = require("path")

/** `">=22.19"` → `[22, 19, 0]`; only the `>=` form is used by this package. */
function minimumOf(range) {
  var match = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(String(range).trim())
  if (!match) throw new Error("engines.node must be of the form >=MAJOR.MINOR, got " + range)
  return [Number(match[1]), Number(match[2] || 0), Number(match[3] || 0)]
}

/** Whether version `"v20.20.2"` or `"20.20.2"` satisfies `range`. */
function satisfies(version, range) {
  var minimum = minimumOf(range)
  var parts = String(version).replace(/^v/, "").split(".")
  for (var i = 0; i < 3; i++) {
    var part = Number(parts[i] || 0)
    if (part !== minimum[i]) return part > minimum[i]
  }
  return true
}

/** The one line printed when `version` is too old; undefined when it will do. */
function problem(version, range) {
  if (satisfies(version, range)) return undefined
  var minimum = minimumOf(range)
  return (
    "campusgate needs Node.js " +
    minimum[0] +
    "." +
    minimum[1] +
    " or newer (24 recommended, see .nvmrc); this is Node.js " +
    String(version).replace(/^v/, "") +
    "."
  )
}

module.exports = { satisfies: satisfies, problem: problem }

if (require.main === module) {
  var range = require(path.join(__dirname, "..", "package.json")).engines.node
  var message = problem(process.versions.node, range)
  if (message !== undefined) {
    console.error(message)
    process.exit(1)
  }
}
