/** The Reviews screens, the chunk `LazyReviews.tsx` loads. */
export { ReviewPage } from "./ReviewPage.tsx"
export { Reviews } from "./Reviews.tsx"
