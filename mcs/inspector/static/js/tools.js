// The Tools page: the list (grouped, or ranked by the discovery search), and one tool as
// each reader sees it, with a form to try a call.

import {get} from "./api.js";
import {callTool, failureView, outcomeView} from "./calls.js";
import {codeBlock, fill, h, pretty, uid} from "./dom.js";
import {schemaForm} from "./schemaform.js";

const OPEN_GROUPS_UP_TO = 60; // tools; above that, groups start folded
const FORMAT_NAMES = {openai: "OpenAI", anthropic: "Anthropic", gemini: "Gemini", mcp: "MCP"};

export class ToolsPage {
  constructor(app) {
    this.app = app;
    this.rows = [];
    this.byName = new Map();
    this.list = document.getElementById("tool-list");
    this.detail = document.getElementById("tool-detail");
    this.search = document.getElementById("search");
    this.status = document.getElementById("search-status");
    this.current = null;
    this.searchTimer = null;
    this.search.addEventListener("input", () => {
      clearTimeout(this.searchTimer);
      this.searchTimer = setTimeout(() => this.runSearch(), 120);
    });
    this.search.addEventListener("keydown", (event) => {
      if (event.key === "ArrowDown") {
        event.preventDefault();
        this.moveFocus(null, 1);
      } else if (event.key === "Enter") {
        event.preventDefault();
        clearTimeout(this.searchTimer);
        this.runSearch();
      }
    });
    this.list.addEventListener("keydown", (event) => {
      if (event.target.matches("a.tool-link") && (event.key === "ArrowDown" || event.key === "ArrowUp")) {
        event.preventDefault();
        this.moveFocus(event.target, event.key === "ArrowDown" ? 1 : -1);
      } else if (event.key === "Escape") {
        this.search.focus();
      }
    });
  }

  async load() {
    const {tools} = await get("tools");
    this.rows = tools;
    this.byName = new Map(tools.map((row) => [row.name, row]));
    this.renderGroups();
  }

  link(row) {
    return h("li", {},
      h("a", {class: "tool-link", href: `#/tools/${encodeURIComponent(row.name)}`, dataset: {tool: row.name}},
        h("span", {class: "tool-name"}, row.name),
        row.writes ? h("span", {class: "badge writes", title: "may change data: asks before running"}, "writes") : null),
      row.summary ? h("span", {class: "summary"}, row.summary) : null);
  }

  renderGroups() {
    const groups = new Map();
    for (const row of this.rows) {
      if (!groups.has(row.group)) groups.set(row.group, []);
      groups.get(row.group).push(row);
    }
    const open = this.rows.length <= OPEN_GROUPS_UP_TO;
    fill(this.list, [...groups].map(([group, rows]) => h("details", {class: "group", open},
      h("summary", {}, `${group} (${rows.length})`),
      h("ul", {class: "tools"}, rows.map((row) => this.link(row))))));
    fill(this.status, `${this.rows.length} tools in ${groups.size} groups`);
  }

  async runSearch() {
    const query = this.search.value.trim();
    if (!query) {
      this.renderGroups();
      return;
    }
    try {
      const found = await get("search", {q: query});
      if (this.search.value.trim() !== query) return; // typed on since
      fill(this.list, h("ol", {class: "tools ranked"}, found.names.map((name) => this.link(this.byName.get(name) || {name}))));
      fill(this.status, found.total === 0 ? "No tool matches" : `${found.total} tools match, best first`);
    } catch (error) {
      fill(this.status, failureView(error));
    }
  }

  moveFocus(from, step) {
    const links = [...this.list.querySelectorAll("a.tool-link")].filter((link) => link.offsetParent !== null);
    if (!links.length) return;
    const index = from ? links.indexOf(from) + step : 0;
    if (index < 0) this.search.focus();
    else links[Math.min(index, links.length - 1)].focus();
  }

  async show(name) {
    this.current = name;
    for (const link of this.list.querySelectorAll("a.tool-link")) {
      if (link.dataset.tool === name) link.setAttribute("aria-current", "true");
      else link.removeAttribute("aria-current");
    }
    if (!name) {
      fill(this.detail, h("p", {class: "muted"}, "Choose a tool to see it as the model sees it, and to try a call."));
      return;
    }
    fill(this.detail, h("p", {class: "muted", role: "status"}, `Loading ${name}…`));
    try {
      const tool = await get("tool", {name, model: this.app.model});
      if (this.current !== name) return;
      this.render(tool);
    } catch (error) {
      fill(this.detail, failureView(error));
    }
  }

  refreshModel() {
    if (this.current) this.show(this.current);
  }

  render(tool) {
    const heading = h("h2", {id: "tool-heading", tabindex: "-1"}, tool.name);
    const badges = h("p", {class: "badges"},
      h("span", {class: "badge"}, `group: ${tool.group}`),
      h("span", {class: `badge ${tool.writes ? "writes" : "reads"}`}, tool.writes ? "writes (asks before running)" : "read-only"),
      tool.interface ? h("span", {class: "badge"}, `${tool.interface} · ${tool.method}`) : null,
      tool.original_name !== tool.name ? h("span", {class: "badge"}, `spec name: ${tool.original_name}`) : null);
    fill(this.detail,
      heading,
      tool.title ? h("p", {class: "title"}, tool.title) : null,
      badges,
      h("section", {"aria-labelledby": "seen-heading"},
        h("h3", {id: "seen-heading"}, "What the model sees"),
        h("p", {}, `Rendered by template “${tool.template}”`,
          tool.rendered_tokens !== null ? ` · ${tool.rendered_tokens} tokens (o200k_base)` : ` · ${tool.rendered.length} characters`),
        codeBlock(tool.rendered, "description rendered for the model"),
        tool.describe_tool ? h("div", {},
          h("p", {}, "In discovery mode the model reads this tool through describe_tool:"),
          codeBlock(tool.describe_tool, "describe_tool answer")) : null),
      this.tryCall(tool),
      h("section", {"aria-labelledby": "native-heading"},
        h("h3", {id: "native-heading"}, "Native exports"),
        Object.entries(tool.native).map(([format, value]) => h("details", {class: "native", dataset: {format}},
          h("summary", {}, FORMAT_NAMES[format] || format), codeBlock(value, `${format} export`)))),
      h("section", {"aria-labelledby": "annotations-heading"},
        h("h3", {id: "annotations-heading"}, "Annotations"),
        Object.keys(tool.annotations).length
          ? h("dl", {class: "annotations"}, Object.entries(tool.annotations).flatMap(([key, value]) => [h("dt", {}, key), h("dd", {}, JSON.stringify(value))]))
          : h("p", {class: "muted"}, "None: MCP clients then assume the tool may write.")),
      h("section", {"aria-labelledby": "schemas-heading"},
        h("h3", {id: "schemas-heading"}, "Schemas"),
        h("details", {}, h("summary", {}, "Input schema"), codeBlock(tool.input_schema, "input schema")),
        tool.output_schema ? h("details", {}, h("summary", {}, "Output schema"), codeBlock(tool.output_schema, "output schema")) : null));
    heading.focus();
  }

  tryCall(tool) {
    const form = schemaForm(tool.input_schema);
    const rawId = uid("raw");
    const raw = h("textarea", {id: rawId, class: "json raw", rows: 12, spellcheck: "false"});
    const rawStatus = h("small", {class: "help", role: "status"});
    const output = h("div", {class: "output"});
    let source = "form";
    const sync = () => {
      if (source !== "form") return;
      const value = form.get();
      raw.value = pretty(value === undefined ? {} : value);
    };
    const fromForm = () => { source = "form"; sync(); };
    form.element.addEventListener("input", fromForm);
    form.element.addEventListener("change", fromForm);
    form.element.addEventListener("click", (event) => { if (event.target.closest("button")) fromForm(); });
    raw.addEventListener("input", () => {
      source = "raw";
      try {
        form.set(JSON.parse(raw.value));
        rawStatus.textContent = "";
      } catch {
        rawStatus.textContent = "Not valid JSON yet.";
      }
    });
    sync();
    const run = async (event) => {
      event.preventDefault();
      let args;
      if (source === "raw") {
        try {
          args = JSON.parse(raw.value);
        } catch {
          fill(output, h("p", {class: "status error", role: "alert"}, "The raw arguments are not valid JSON."));
          raw.focus();
          return;
        }
      } else {
        args = form.get() || {};
      }
      fill(output, h("p", {class: "muted", role: "status"}, "Running…"));
      try {
        fill(output, outcomeView(await callTool(tool.name, args)));
      } catch (error) {
        fill(output, failureView(error));
      }
    };
    return h("section", {"aria-labelledby": "try-heading"},
      h("h3", {id: "try-heading"}, "Try a call"),
      h("p", {class: "help"}, "Runs through the whole pipeline: validation, policies, hooks, the driver's call. ",
        h("span", {class: "required"}, "*"), " marks a required argument."),
      h("form", {class: "try", onsubmit: run},
        h("div", {class: "try-columns"},
          h("div", {class: "form-column"}, form.element),
          h("div", {class: "raw-column"},
            h("label", {for: rawId}, "Arguments as JSON (edit either side)"), raw, rawStatus)),
        h("button", {type: "submit", class: "primary"}, tool.writes ? `Run ${tool.name}…` : `Run ${tool.name}`)),
      output);
  }
}
