// The System prompt page: the whole prompt the chosen model gets, and which template made it.

import {get} from "./api.js";
import {codeBlock, fill, h} from "./dom.js";
import {failureView} from "./calls.js";

export class PromptPage {
  constructor(app) {
    this.app = app;
    this.body = document.getElementById("prompt-body");
  }

  async show() {
    fill(this.body, h("p", {class: "muted", role: "status"}, "Loading…"));
    try {
      const prompt = await get("prompt", {model: this.app.model});
      const size = prompt.tokens !== null ? `${prompt.tokens} tokens (o200k_base), ${prompt.characters} characters` : `${prompt.characters} characters`;
      fill(this.body,
        h("p", {}, `For model “${prompt.model || "(any)"}”: template “${prompt.template}”, calls taught as ${prompt.call_format}, tools rendered as ${prompt.description_style}. `, size, "."),
        codeBlock(prompt.system_prompt, "system prompt"),
        this.templates());
    } catch (error) {
      fill(this.body, failureView(error));
    }
  }

  refreshModel() {
    this.show();
  }

  templates() {
    const rows = this.app.overview.templates;
    return h("table", {class: "templates"},
      h("caption", {}, "Templates, chosen by the most specific model-name glob"),
      h("thead", {}, h("tr", {}, ["template", "model globs", "call format", "tools as"].map((t) => h("th", {scope: "col"}, t)))),
      h("tbody", {}, rows.map((t) => h("tr", {}, h("td", {}, t.name), h("td", {}, t.globs.join(", ")),
        h("td", {}, t.call_format), h("td", {}, t.description_style)))));
  }
}
