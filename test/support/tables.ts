/**
 * Table-driven tests: one test per case of a table, where the tests would
 * otherwise repeat one assertion line by line or copy one test body for each
 * group of cases.
 */
import { expect, it } from "vitest"

/**
 * One test per `[input, expected]` case that `fn(input)` equals `expected`
 * (`toEqual`: primitives compared as `toBe` does). `title` is `it.each`'s,
 * `%j` or `%s` standing for the input, then the expected value.
 */
export const itAnswers = <I, O>(title: string, fn: (input: I) => O, cases: ReadonlyArray<readonly [I, O]>): void => {
  it.each(cases.map(([input, expected]): [I, O] => [input, expected]))(title, (input, expected) => {
    expect(fn(input)).toEqual(expected)
  })
}

/** One test per input that `fn(input)` equals the one `expected` (`itAnswers` with one answer for all). */
export const itAnswersAlike = <I, O>(title: string, fn: (input: I) => O, expected: O, inputs: ReadonlyArray<I>): void =>
  itAnswers(
    title,
    fn,
    inputs.map((input) => [input, expected] as const)
  )

/**
 * One test per named case, `cases` mapping each name to `[input, expected]`:
 * `fn(input)` equals `expected`. `title` is `it.each`'s, `%s` standing for
 * the name.
 */
export const itAnswersNamed = <I, O>(
  title: string,
  fn: (input: I) => O,
  cases: Readonly<Record<string, readonly [I, O]>>
): void => {
  it.each(Object.entries(cases).map(([name, [input, expected]]): [string, I, O] => [name, input, expected]))(
    title,
    (_name, input, expected) => {
      expect(fn(input)).toEqual(expected)
    }
  )
}
