// The inspector's entry point (built by Vite into dist/inspector, served by the Worker at /inspect).
import { render } from "preact";
import { App } from "./app";

render(<App />, document.getElementById("app")!);
