/**
 * Who a host under an institution serves, read from the labels in front of
 * the institution's domain: students (`stu.`, `students.`, `alumnos.`,
 * `etu.`), staff (`staff.`, `faculty.`, `docentes.`), or alumni (`alumni.`,
 * `alum.`, `alumnimail.`, `egresados.`). A host with no such label serves
 * the institution's members alike: `mixed`.
 *
 * The forms are curated across the languages of the data. Two are easy to
 * get wrong: Spanish and Catalan `alumnos` / `alumnes` and Portuguese
 * `alunos` mean pupils and students (current ones), not alumni; and `post.`
 * is an alumni forwarding service only under `.edu`, where it is the US
 * convention (`post.harvard.edu`), while elsewhere it is the students' own
 * mail (`post.au.dk`, `post.bgu.ac.il`).
 */
import type { HostRole } from "../../domain/Institution.ts"

const forms: ReadonlyArray<readonly [Exclude<HostRole, "mixed">, ReadonlyArray<string>]> = [
  [
    "student",
    [
      ...["student", "students", "stu", "stud", "studs", "studmail", "stumail", "studentmail", "learner", "learners"],
      ...["studenti", "studente", "studenten", "studierende", "etu", "etud", "etudiant", "etudiants"],
      ...["estudiante", "estudiantes", "alumno", "alumnos", "alumne", "alumnes", "aluno", "alunos", "estudante"],
      ...["estudantes", "discente", "discentes", "ogrenci", "ogr", "opiskelija", "hallgato", "mahasiswa", "pupil"],
      ...["pupils", "elev", "elever", "leerling", "leerlingen", "uczen", "ucznia"]
    ]
  ],
  [
    "staff",
    [
      ...["staff", "faculty", "employee", "employees", "personal", "personnel", "mitarbeiter", "mitarbeitende"],
      ...["docente", "docentes", "profesor", "profesores", "professor", "professores", "professors", "prof"],
      ...["teacher", "teachers", "enseignant", "enseignants", "funcionarios", "servidor", "servidores"],
      ...["ansatt", "ansatte", "medarbejder", "personeel", "medewerker", "medewerkers", "dozent", "dozenten"],
      ...["lehrende", "lehrer", "pracownik", "pracownicy", "henkilokunta", "ogretmen", "personale", "docenti"]
    ]
  ],
  [
    "alumni",
    [
      ...["alumni", "alumnae", "alumnus", "alum", "alums", "alumnimail", "alumniemail", "alumnifwd"],
      ...["exalumnos", "exalumnes", "exalunos", "exalumni", "egresados", "egresado", "egressos", "egresso"],
      ...["ehemalige", "absolventen", "absolvent", "anciens", "graduates", "oudstudenten"]
    ]
  ]
]

const roleByLabel = new Map<string, Exclude<HostRole, "mixed">>()
for (const [role, labels] of forms) for (const label of labels) roleByLabel.set(label, role)

/**
 * Per label length, a bit per first letter (a-z) of the role forms that
 * long: most labels in front of an institution's domain (`mail.`, `cs.`,
 * `www.`) are answered without slicing the host (measured: bench/library.ts).
 * Labels with a hyphen are looked at part by part, so they always pass.
 */
const firstLetters = new Uint32Array(64)
for (const label of roleByLabel.keys()) firstLetters[label.length]! |= 1 << (label.charCodeAt(0) - 97)

/** The role a single label names (`alumni`, `alumni-mail`, `mail-students`), if any. */
const labelRole = (label: string): Exclude<HostRole, "mixed"> | undefined => {
  const whole = roleByLabel.get(label)
  if (whole !== undefined || !label.includes("-")) return whole
  for (const part of label.split("-")) {
    const role = roleByLabel.get(part)
    if (role !== undefined) return role
  }
  return undefined
}

/**
 * The role named by the labels of `host` in front of `institutionDomain`
 * (a listed domain, or the registrable domain under a zone), the nearest to
 * the institution first; `undefined` when none names one. A listed domain's
 * own role is the same question about it and its registrable domain
 * (a list may name `students.x.edu` itself).
 */
export const roleOf = (host: string, institutionDomain: string): Exclude<HostRole, "mixed"> | undefined => {
  const end = host.length - institutionDomain.length - 1
  return end > 0 ? prefixRole(host, end, institutionDomain) : undefined
}

/** The role of the labels `host[0, end)`, read from the right (nearest the institution) leftwards. */
const prefixRole = (host: string, end: number, institutionDomain: string): Exclude<HostRole, "mixed"> | undefined => {
  let right = end
  while (right > 0) {
    const left = host.lastIndexOf(".", right - 1) + 1
    const length = right - left
    const first = host.charCodeAt(left) - 97
    const hyphen = host.indexOf("-", left)
    if (
      (length < 64 && first >= 0 && first < 26 && (firstLetters[length]! & (1 << first)) !== 0) ||
      (hyphen >= 0 && hyphen < right) ||
      (length === 4 && host.startsWith("post", left))
    ) {
      const label = host.slice(left, right)
      const role = labelRole(label)
      if (role !== undefined) return role
      if (label === "post" && (institutionDomain.endsWith(".edu") || institutionDomain === "edu")) return "alumni"
    }
    right = left - 1
  }
  return undefined
}

/** The role forms, for documentation and tests. */
export const roleForms: ReadonlyMap<string, Exclude<HostRole, "mixed">> = roleByLabel
