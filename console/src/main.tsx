/** The console's entry: its styles and the app, rendered into the page's root. */
import "./styles.css"
import { render } from "preact"
import { App } from "./app.tsx"

render(<App />, document.getElementById("app")!)
