// The Paste a reply page: the calls the parser finds in any model output, how sure it is
// (explicit, weak, guessed), what would run and what would be refused and why; and running it.

import {post} from "./api.js";
import {failureView, outcomeView, runConfirmed} from "./calls.js";
import {fill, h} from "./dom.js";

const KIND_HELP = {
  explicit: "the format marks it as a call",
  weak: "call-shaped, found by shape alone",
  guessed: "found only because the tool names are known",
};

export class ReplyPage {
  constructor(app) {
    this.app = app;
    this.text = document.getElementById("reply-text");
    this.analysis = document.getElementById("reply-analysis");
    this.output = document.getElementById("reply-output");
    this.runButton = document.getElementById("reply-run");
    this.last = null;
    this.analysed = null;  // the text this.last describes
    document.getElementById("reply-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.analyse();
    });
    this.runButton.addEventListener("click", () => this.run());
  }

  show() {}

  async analyse() {
    fill(this.output);
    const text = this.text.value;
    this.last = null;
    this.analysed = null;
    try {
      this.last = await post("reply/analyse", {reply: text});
      this.analysed = text;
      this.render(this.last);
    } catch (error) {
      fill(this.analysis, failureView(error));
    }
  }

  render(result) {
    const rows = result.calls.map((call, index) => h("tr", {class: `call ${call.verdict.replace(" ", "-")}`},
      h("td", {}, String(index + 1)),
      h("td", {}, h("code", {}, call.tool)),
      h("td", {}, h("span", {class: `kind ${call.kind}`, title: KIND_HELP[call.kind]}, call.kind)),
      h("td", {}, h("code", {class: "args"}, JSON.stringify(call.arguments))),
      h("td", {}, call.verdict, call.writes ? " (writes: asks first)" : ""),
      h("td", {}, call.error ? h("span", {}, h("strong", {}, call.error), `: ${call.message}`) : (call.message || ""))));
    const damaged = (result.damaged || []).map((attempt) => h("li", {class: "damaged"},
      h("strong", {}, attempt.damage === "cut_off" ? "cut off" : "unreadable"),
      attempt.tool ? [" call to ", h("code", {}, attempt.tool)] : " call",
      `: ${attempt.message}`));
    fill(this.analysis,
      h("p", {role: "status"}, result.note),
      damaged.length ? h("ul", {class: "attempts", "aria-label": "Calls tried but not readable"}, damaged) : null,
      result.calls.length ? h("table", {class: "calls"},
        h("caption", {}, `Calls found (${result.input === "json" ? "a JSON message" : "text"})`),
        h("thead", {}, h("tr", {}, ["#", "tool", "kind", "arguments", "verdict", "why"].map((t) => h("th", {scope: "col"}, t)))),
        h("tbody", {}, rows)) : null,
      h("p", {class: "help"}, "Kinds: ", Object.entries(KIND_HELP).map(([kind, text]) => `${kind}: ${text}`).join("; "), "."));
    this.runButton.disabled = !result.calls.some((call) => call.verdict !== "passed through") &&
      !result.needs_confirmation.length;
  }

  async run() {
    // What runs is the text the analysis (and so the confirmation) describes: a text edited
    // since is analysed again first, so the person confirms the calls that will run.
    if (!this.last || this.analysed !== this.text.value) await this.analyse();
    if (!this.last) return;
    const reply = this.analysed;
    fill(this.output, h("p", {class: "muted", role: "status"}, "Running…"));
    try {
      const outcome = await runConfirmed("reply/run", {reply});
      fill(this.output, outcomeView(outcome));
    } catch (error) {
      fill(this.output, failureView(error));
    }
  }
}
