/**
 * `npm run build` step 6: the `campusgate` executable as a bundle in
 * `dist/daemon/` (the package's `bin`, and the Docker image's). esbuild
 * bundles `src/cli/bin.ts` with the worker-thread modules it starts by
 * their place beside it (`jobs/jobThread.ts`, `config/loadConfigWorker.ts`,
 * `verification/mailThread.ts`;
 * their code shared in chunks), the dependencies included, comments and
 * whitespace left out. Names are kept (identifiers are not minified), so a
 * stack trace still names its functions; there is no source map, which
 * would carry every dependency's sources. The library (`dist/index.js`)
 * stays compiled module by module, with its maps.
 *
 * Why: V8 keeps the source text of every module a thread loads, and the
 * dependencies' modules carry their whole documentation; loaded module by
 * module, that text was ~18 MB of the request thread's heap, and each job
 * thread loads much of it again. Measured (shipped config, one validation,
 * 3 s after start, three alternating starts): start to listening 0.81-0.88 s
 * against 1.41-1.47 s, resident memory 264-285 MB against 319-356 MB; two
 * successive 1M-email jobs of each kind (two job threads, two alternating
 * rounds), peak RSS after the fourth 948 / 1010 MB against 1086 / 1085 MB.
 *
 * Prints what it wrote as one JSON line.
 */
import { rmSync } from "node:fs"
import { builtinModules, createRequire } from "node:module"
import { fileURLToPath } from "node:url"
import { build, type Plugin } from "esbuild"

const root = fileURLToPath(new URL("../", import.meta.url))
const outdir = `${root}dist/daemon`

/** The accessors of Node's modules the code imports by name (cheap ones): the build fails on any other. */
const importedAccessors = new Set(["BlockList"])

/**
 * Node's own modules by `require`, not `import`: importing one makes its ES
 * module facade, which reads every export, so lazy ones load at once
 * (`node:http`'s `WebSocket` and kin load undici: ~30-70 ms of every start
 * for a client the daemon does not use). A `require` of one (in a CommonJS
 * dependency) becomes a CommonJS module of one line,
 * `module.exports = require(...)`. An `import` of one becomes an ES module
 * that requires it once and exports its plain values by name (what this
 * Node has; accessors, the lazy ones, only through the default export): a
 * CommonJS module imported from an ES module is copied by esbuild's
 * `__toESM`, a getter for each of its properties at each of the ~300 places
 * importing one (~15k properties; `npm run bench:start`, 9 alternating
 * rounds: the daemon's CPU until `/healthz` 0.95x, 0.84-1.06).
 */
const builtinsByRequire: Plugin = {
  name: "builtins-by-require",
  setup(build) {
    const names = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]))
    const require = createRequire(import.meta.url)
    build.onResolve({ filter: /^[a-z_:/]+$/ }, (args) => {
      if (!names.has(args.path)) return undefined
      if (args.namespace === "builtin" || args.namespace === "builtin-import")
        return { path: args.path, external: true }
      return { path: args.path, namespace: args.kind === "import-statement" ? "builtin-import" : "builtin" }
    })
    build.onLoad({ filter: /.*/, namespace: "builtin" }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)})`,
      loader: "js"
    }))
    build.onLoad({ filter: /.*/, namespace: "builtin-import" }, (args) => {
      const module = require(args.path) as object
      const values = Object.getOwnPropertyNames(module).filter(
        (name) =>
          name !== "default" &&
          /^[A-Za-z_$][\w$]*$/.test(name) &&
          ("value" in (Object.getOwnPropertyDescriptor(module, name) ?? {}) || importedAccessors.has(name))
      )
      return {
        contents:
          `const module = require(${JSON.stringify(args.path)});\nexport default module;\n` +
          `export const { ${values.join(", ")} } = module;`,
        loader: "js"
      }
    })
  }
}

const started = performance.now()
rmSync(outdir, { recursive: true, force: true })
const result = await build({
  absWorkingDir: root,
  // The worker modules keep the names `JobThreads.ts`, `loadConfigThread.ts` and `MailTransport.ts` start them by (beside the chunk).
  entryPoints: {
    campusgate: "src/cli/bin.ts",
    jobThread: "src/jobs/jobThread.ts",
    loadConfigWorker: "src/config/loadConfigWorker.ts",
    mailThread: "src/verification/mailThread.ts"
  },
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node22",
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: "eof",
  outdir,
  chunkNames: "[name]-[hash]",
  // CommonJS dependencies inside an ES module bundle call `require` for Node's own modules.
  banner: {
    js: 'import { createRequire as __campusgateRequire } from "node:module";const require=__campusgateRequire(import.meta.url);'
  },
  // Loaded only by a deployment with OpenID Connect clients (`server/oidc.ts` imports it on the first request),
  // from the installed package: bundled, its ~1 MB (with Koa) would be in every install's bundle.
  external: ["oidc-provider"],
  plugins: [builtinsByRequire],
  metafile: true,
  logLevel: "warning"
})
const files = Object.entries(result.metafile.outputs)
  .filter(([path]) => path.endsWith(".js"))
  .map(([path, output]) => ({ path, bytes: output.bytes }))
console.log(JSON.stringify({ built: "dist/daemon", files, ms: Math.round(performance.now() - started) }))
