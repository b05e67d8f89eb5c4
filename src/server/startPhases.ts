/**
 * The daemon's start, phase by phase, for its log: how long each step took
 * (milliseconds), so a slow start says where its time went. The module load
 * is measured from the process's start to the mark `main.ts` sets once its
 * imports are evaluated (`modulesLoadedMark`); the institution index's load
 * is reported by `InstitutionIndex.ts` on its diagnostics channel
 * (`institutionIndexChannel`), listened to only while the daemon starts.
 */
import { subscribe, unsubscribe } from "node:diagnostics_channel"
import { type IndexLoadReport, institutionIndexChannel } from "../engine/InstitutionIndex.ts"

/** Set by `cli/main.ts` once every module the command line needs is loaded. */
export const modulesLoadedMark = "campusgate:modules-loaded"

export interface StartPhases {
  /** Ends the phase running since the last one (or since the modules loaded): its duration is kept under `name`. */
  readonly end: (name: string) => void
  /**
   * The phases so far, in order, with the institution index's load (within
   * the phase that made it) and the CPU time the process has used (all its
   * threads).
   */
  readonly summary: () => Record<string, number | string>
  /** Stops listening for the index's loads. */
  readonly close: () => void
}

const rounded = (ms: number): number => Math.round(ms * 10) / 10

export const startPhases = (): StartPhases => {
  const loaded = performance.getEntriesByName(modulesLoadedMark)[0]?.startTime
  const phases: Record<string, number | string> = {}
  if (loaded !== undefined) phases.modules = rounded(loaded)
  let last = loaded ?? performance.now()
  const onIndexLoad = (message: unknown) => {
    const report = message as IndexLoadReport
    phases.institutionIndex = rounded(report.ms)
    phases.institutionIndexForm = report.form
  }
  subscribe(institutionIndexChannel, onIndexLoad)
  return {
    end: (name) => {
      const now = performance.now()
      phases[name] = rounded(now - last)
      last = now
    },
    summary: () => {
      const cpu = process.cpuUsage()
      return { ...phases, cpuMs: Math.round((cpu.user + cpu.system) / 1000) }
    },
    close: () => {
      unsubscribe(institutionIndexChannel, onIndexLoad)
    }
  }
}
