/**
 * The logistic model under the candidate score (`candidates.ts`): fitting
 * weights by gradient descent, a probability from them, and the area under
 * the ROC curve that measures it. Plain arithmetic, deterministic.
 */

/** A feature that fired in an example: its id and value. */
export interface FeatureValue {
  readonly id: string
  readonly value: number
}

export const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x))

/** The probability a fitted bias and weights give `features`. */
export const probability = (
  fitted: { readonly bias: number; readonly weights: Readonly<Record<string, number>> },
  features: ReadonlyArray<FeatureValue>
): number => {
  let logit = fitted.bias
  for (const f of features) logit += (fitted.weights[f.id] ?? 0) * f.value
  return sigmoid(logit)
}

/** A training example: its features and whether it is an institution. */
export interface Example {
  readonly features: ReadonlyArray<FeatureValue>
  readonly positive: boolean
}

/**
 * Fits a weight for each of `featureIds` by gradient descent on the
 * log-loss with an L2 penalty (λ), positives and negatives weighted to
 * count alike. Deterministic.
 */
export const fitLogistic = (
  examples: ReadonlyArray<Example>,
  featureIds: ReadonlyArray<string>,
  options: { readonly iterations?: number; readonly l2?: number; readonly rate?: number } = {}
): { bias: number; weights: Record<string, number> } => {
  const iterations = options.iterations ?? 500
  const l2 = options.l2 ?? 1e-4
  const rate = options.rate ?? 4
  const index = new Map(featureIds.map((id, i) => [id, i]))
  const rows = examples.map((example) => {
    const known = example.features.filter((f) => index.has(f.id))
    return {
      features: known.map((f) => index.get(f.id)!),
      values: known.map((f) => f.value),
      positive: example.positive
    }
  })
  const positives = rows.filter((row) => row.positive).length
  const negatives = rows.length - positives
  const classWeight = (positive: boolean) => (positive ? rows.length / (2 * positives) : rows.length / (2 * negatives))
  const weights = new Float64Array(featureIds.length)
  let bias = 0
  for (let step = 0; step < iterations; step++) {
    const gradient = new Float64Array(featureIds.length)
    let biasGradient = 0
    for (const row of rows) {
      let logit = bias
      for (let k = 0; k < row.features.length; k++) logit += weights[row.features[k]!]! * row.values[k]!
      const error = (sigmoid(logit) - (row.positive ? 1 : 0)) * classWeight(row.positive)
      biasGradient += error
      for (let k = 0; k < row.features.length; k++) gradient[row.features[k]!]! += error * row.values[k]!
    }
    bias -= (rate * biasGradient) / rows.length
    for (let i = 0; i < weights.length; i++) weights[i]! -= rate * (gradient[i]! / rows.length + l2 * weights[i]!)
  }
  const named: Record<string, number> = {}
  featureIds.forEach((id, i) => {
    const weight = Math.round(weights[i]! * 1000) / 1000
    if (weight !== 0) named[id] = weight
  })
  return { bias: Math.round(bias * 1000) / 1000, weights: named }
}

/** The area under the ROC curve of scores for positives against negatives (ties count half). */
export const rocAuc = (positives: ReadonlyArray<number>, negatives: ReadonlyArray<number>): number => {
  const all = [...positives.map((s) => [s, 1] as const), ...negatives.map((s) => [s, 0] as const)].sort(
    (a, b) => a[0] - b[0]
  )
  let rankSum = 0
  for (let i = 0; i < all.length; ) {
    let j = i
    while (j < all.length && all[j]![0] === all[i]![0]) j++
    const rank = (i + j + 1) / 2
    for (let k = i; k < j; k++) if (all[k]![1] === 1) rankSum += rank
    i = j
  }
  const p = positives.length
  const n = negatives.length
  return (rankSum - (p * (p + 1)) / 2) / (p * n)
}
