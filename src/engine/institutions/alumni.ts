/**
 * Sub-domains that serve former students, never current ones
 * (`alumni.x.edu`, `alum.utoronto.ca`): a general rule on top of the
 * stoplist, since every institution names them the same few ways.
 */
const alumniLabel = /(?:^|\.)(?:alumni|alumnae|alumnus|alum|alumnos|exalumnos|alumnes|ehemalige|graduates?)(?:\.|$)/

/** True when a label left of `matchedDomain` in `host` names an alumni service. */
export const isAlumniHost = (host: string, matchedDomain: string): boolean =>
  host.length > matchedDomain.length && alumniLabel.test(host.slice(0, host.length - matchedDomain.length - 1))
