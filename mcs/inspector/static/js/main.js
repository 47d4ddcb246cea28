// The inspector page: navigation between pages (by the URL's #hash), the model selector
// shared by every page, and start-up.

import {get} from "./api.js";
import {failureView} from "./calls.js";
import {fill, h} from "./dom.js";
import {InterfacesPage} from "./interfaces.js";
import {PromptPage} from "./prompt.js";
import {ReplyPage} from "./reply.js";
import {ToolsPage} from "./tools.js";

class App {
  constructor() {
    this.model = "";
    this.overview = null;
    this.pages = {tools: new ToolsPage(this), prompt: new PromptPage(this), reply: new ReplyPage(this),
      interfaces: new InterfacesPage(this)};
    this.page = null;
    const model = document.getElementById("model");
    model.addEventListener("change", () => {
      this.model = model.value.trim();
      this.describeModel();
      const page = this.pages[this.page];
      if (page && page.refreshModel) page.refreshModel();
    });
    window.addEventListener("hashchange", () => this.route());
    document.addEventListener("keydown", (event) => {
      const typing = event.target.matches("input, textarea, select, [contenteditable]");
      if (event.key === "/" && !typing) {
        event.preventDefault();
        location.hash = "#/tools";
        document.getElementById("search").focus();
      }
    });
  }

  async start() {
    try {
      this.overview = await get("overview");
    } catch (error) {
      fill(document.getElementById("main"), failureView(error));
      return;
    }
    const {driver, tools, mode} = this.overview;
    fill(document.getElementById("driver-name"), driver.name);
    fill(document.getElementById("driver-facts"),
      `${driver.protocol} over ${driver.transport}, from ${driver.spec_format} · ${tools} tools · ${mode} mode`);
    fill(document.getElementById("models"), this.overview.models.map((name) => h("option", {value: name})));
    this.describeModel();
    await this.pages.tools.load();
    this.route();
  }

  describeModel() {
    const templates = this.overview ? this.overview.templates : [];
    const hint = this.model ? "" : " (no model: the default template)";
    fill(document.getElementById("model-note"), `${templates.length} templates${hint}`);
  }

  route() {
    const hash = location.hash;
    if (hash && !hash.startsWith("#/")) return; // an in-page link such as "skip to content"
    const [, name = "tools", ...rest] = (hash || "#/tools").slice(1).split("/");
    const page = this.pages[name] ? name : "tools";
    for (const section of document.querySelectorAll("section.page")) section.hidden = section.id !== `page-${page}`;
    for (const link of document.querySelectorAll("nav a[data-page]")) {
      if (link.dataset.page === page) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
    const changed = this.page !== page;
    this.page = page;
    if (page === "tools") this.pages.tools.show(rest.length ? decodeURIComponent(rest.join("/")) : null);
    else this.pages[page].show();
    if (changed && page !== "tools") document.getElementById(`page-${page}`).querySelector("h2").focus();
  }
}

new App().start();
