// The Interfaces page: for each interface the driver implements, a view built from the
// interface definition alone (method names, parameter and result schemas): a media player,
// a file tree, an editor, a chat box. Unknown interfaces, and methods a view does not use,
// get forms generated from the method's parameters. Conformance problems sit beside each.

import {get, post} from "./api.js";
import {callTool, failureView, outcomeView, runConfirmed} from "./calls.js";
import {codeBlock, fill, h, uid} from "./dom.js";
import {schemaForm} from "./schemaform.js";

function method(view, name) {
  const found = view.methods.find((m) => m.name === name);
  return found && found.tool && found.available ? found : null;
}

/** The first parameter of `m` whose type is one of `types`: [name, schema], or null. */
function parameter(m, types) {
  const properties = (m && m.parameters && m.parameters.properties) || {};
  const required = new Set((m && m.parameters && m.parameters.required) || []);
  const entries = Object.entries(properties).filter(([, schema]) => types.includes(schema.type));
  entries.sort(([a], [b]) => Number(required.has(b)) - Number(required.has(a)));
  return entries[0] || null;
}

/** Run a method; returns the outcome (null if declined) after showing it in `output`. */
async function run(m, args, output) {
  fill(output, h("p", {class: "muted", role: "status"}, `${m.name}…`));
  try {
    const outcome = await callTool(m.tool, args);
    fill(output, outcomeView(outcome));
    return outcome;
  } catch (error) {
    fill(output, failureView(error));
    return null;
  }
}

function resultOf(outcome) {
  return outcome && outcome.ok && outcome.result && typeof outcome.result === "object" ? outcome.result : null;
}

// ------------------------------------------------------------------ media.player.v1

function mediaPlayer(view) {
  const play = method(view, "play");
  const pause = method(view, "pause");
  const volume = method(view, "set_volume");
  const output = h("div", {class: "output"});
  const state = h("output", {class: "player-state", "aria-live": "polite"}, "stopped");
  const act = async (m, args) => {
    const result = resultOf(await run(m, args, output));
    if (result && typeof result.status === "string") state.textContent = result.status;
  };
  const controls = [];
  if (play) controls.push(h("button", {type: "button", class: "primary", dataset: {method: "play"}, onclick: () => act(play, {})}, "Play"));
  if (pause) controls.push(h("button", {type: "button", dataset: {method: "pause"}, onclick: () => act(pause, {})}, "Pause"));
  const knob = volume && parameter(volume, ["number", "integer"]);
  if (knob) {
    const [name, schema] = knob;
    const min = schema.minimum ?? 0;
    const max = schema.maximum ?? (schema.type === "integer" ? 100 : 1);
    const step = schema.type === "integer" ? 1 : (max - min) / 20;
    const id = uid("volume");
    const shown = h("output", {for: id}, String((min + max) / 2));
    const slider = h("input", {id, type: "range", min: String(min), max: String(max), step: String(step),
      value: String((min + max) / 2), dataset: {method: "set_volume"}});
    slider.addEventListener("input", () => { shown.textContent = slider.value; });
    slider.addEventListener("change", () => act(volume, {[name]: Number(slider.value)}));
    controls.push(h("span", {class: "volume"}, h("label", {for: id}, `Volume (${min} to ${max})`), slider, shown));
  }
  return h("div", {class: "ui player"},
    h("p", {}, "State: ", state),
    h("div", {class: "controls", role: "group", "aria-label": "player controls"}, controls),
    output);
}

// ------------------------------------------------------------------ filesystem.navigator.v1

function joinPath(folder, name) {
  return folder.endsWith("/") ? `${folder}${name}` : `${folder}/${name}`;
}

function fileNavigator(view) {
  const listDir = method(view, "list_dir");
  const openFile = method(view, "open_file");
  const deleteFile = method(view, "delete_file");
  const pathOf = (m) => (parameter(m, ["string"]) || ["path"])[0];
  const output = h("div", {class: "output"});
  const viewer = h("div", {class: "viewer"});
  const rootId = uid("root");
  const root = h("input", {id: rootId, type: "text", value: "/"});
  const tree = h("ul", {class: "tree", "aria-label": "files"});

  const showFile = async (path) => {
    const result = resultOf(await run(openFile, {[pathOf(openFile)]: path}, output));
    if (!result) return;
    const parts = path.split("/").filter(Boolean);
    fill(viewer,
      h("nav", {class: "breadcrumbs", "aria-label": "breadcrumbs"},
        h("ol", {}, h("li", {}, "/"), parts.map((part) => h("li", {}, part)))),
      codeBlock(typeof result.content === "string" ? result.content : result, `content of ${path}`),
      deleteFile ? h("button", {type: "button", class: "danger", dataset: {method: "delete_file"}, onclick: async () => {
        const outcome = await run(deleteFile, {[pathOf(deleteFile)]: path}, output);
        if (outcome && outcome.ok) {
          fill(viewer);
          await list(root.value, tree);
        }
      }}, `Delete ${path}…`) : null);
  };

  const list = async (folder, into) => {
    const result = resultOf(await run(listDir, {[pathOf(listDir)]: folder}, output));
    const entries = result && Array.isArray(result.entries) ? result.entries : [];
    fill(into, entries.map((entry) => {
      const path = joinPath(folder, entry.name);
      if (entry.type === "directory") {
        const children = h("ul", {hidden: true});
        const toggle = h("button", {type: "button", class: "dir", "aria-expanded": "false", dataset: {path}}, `${entry.name}/`);
        toggle.addEventListener("click", async () => {
          const opening = toggle.getAttribute("aria-expanded") !== "true";
          toggle.setAttribute("aria-expanded", String(opening));
          children.hidden = !opening;
          if (opening) await list(path, children);
        });
        return h("li", {}, toggle, children);
      }
      return h("li", {}, h("button", {type: "button", class: "file", dataset: {path}, disabled: !openFile,
        onclick: () => showFile(path)}, entry.name));
    }));
  };

  if (!listDir) return h("div", {class: "ui"}, h("p", {}, "This server has no list_dir tool."));
  return h("div", {class: "ui navigator"},
    h("form", {class: "inline", onsubmit: (event) => { event.preventDefault(); list(root.value, tree); }},
      h("label", {for: rootId}, "Folder"), root, h("button", {type: "submit"}, "List")),
    h("div", {class: "navigator-columns"}, tree, viewer),
    output);
}

// ------------------------------------------------------------------ code.editor.v1

function codeEditor(view) {
  const openFile = method(view, "open_file");
  const editLine = method(view, "edit_line");
  const runCode = method(view, "run_code");
  const output = h("div", {class: "output"});
  const pathId = uid("path");
  const editorId = uid("editor");
  const path = h("input", {id: pathId, type: "text", value: ""});
  const editor = h("textarea", {id: editorId, class: "editor", rows: 14, spellcheck: "false", disabled: true});
  const gutter = h("pre", {class: "gutter", "aria-hidden": "true"});
  const runOutput = h("div", {class: "run-output"});
  const pathOf = (m) => (parameter(m, ["string"]) || ["path"])[0];
  let original = [];
  let openPath = "";
  const numberLines = () => { gutter.textContent = editor.value.split("\n").map((_, i) => i + 1).join("\n"); };
  editor.addEventListener("input", numberLines);

  const open = async () => {
    const result = resultOf(await run(openFile, {[pathOf(openFile)]: path.value}, output));
    if (!result || typeof result.content !== "string") return;
    openPath = path.value;
    original = result.content.split("\n");
    editor.value = result.content;
    editor.disabled = false;
    numberLines();
    editor.focus();
  };

  const save = async () => {
    const lines = editor.value.split("\n");
    if (lines.length !== original.length) {
      fill(output, h("p", {class: "status error", role: "alert"},
        "edit_line replaces one line at a time: keep the number of lines, and change lines in place."));
      return;
    }
    const changes = lines.map((text, index) => ({path: openPath, line: index + 1, text}))
      .filter((change) => change.text !== original[change.line - 1]);
    if (!changes.length) {
      fill(output, h("p", {class: "muted", role: "status"}, "No line changed."));
      return;
    }
    // One request for every changed line: the server shows them all, and the confirmation
    // it gives covers exactly those lines.
    let answer;
    try {
      answer = await runConfirmed("calls", {calls: changes.map((change) => ({tool: editLine.tool, arguments: change}))});
    } catch (error) {
      fill(output, failureView(error));
      return;
    }
    if (!answer) return;
    for (const [index, outcome] of answer.outcomes.entries()) {
      fill(output, outcomeView(outcome));
      if (outcome.ok) original[changes[index].line - 1] = changes[index].text;
    }
  };

  const execute = async () => {
    const result = resultOf(await run(runCode, {[pathOf(runCode)]: openPath || path.value}, output));
    if (result) {
      fill(runOutput,
        h("p", {}, `exit code ${result.exit_code}`),
        codeBlock(result.stdout || "", "standard output"),
        result.stderr ? codeBlock(result.stderr, "standard error") : null);
    }
  };

  return h("div", {class: "ui editor-ui"},
    h("form", {class: "inline", onsubmit: (event) => { event.preventDefault(); if (openFile) open(); }},
      h("label", {for: pathId}, "File"), path, h("button", {type: "submit", disabled: !openFile}, "Open")),
    h("label", {for: editorId, class: "visually-hidden"}, "File content"),
    h("div", {class: "editor-frame"}, gutter, editor),
    h("div", {class: "controls"},
      editLine ? h("button", {type: "button", dataset: {method: "edit_line"}, onclick: save}, "Save changed lines…") : null,
      runCode ? h("button", {type: "button", class: "primary", dataset: {method: "run_code"}, onclick: execute}, "Run") : null),
    runOutput,
    output);
}

// ------------------------------------------------------------------ chat.assistant.v1

function chatBox(view) {
  const reply = method(view, "reply");
  if (!reply) return h("div", {class: "ui"}, h("p", {}, "This server has no reply tool."));
  const [messageName] = parameter(reply, ["string"]) || ["message"];
  const hasConversation = Boolean(reply.parameters.properties && reply.parameters.properties.conversation_id);
  const conversation = `inspect-${Math.random().toString(36).slice(2, 10)}`;
  const log = h("ol", {class: "chat-log", "aria-live": "polite", "aria-label": "conversation"});
  const output = h("div", {class: "output"});
  const inputId = uid("message");
  const input = h("input", {id: inputId, type: "text", autocomplete: "off"});
  const send = async (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    log.append(h("li", {class: "you"}, h("strong", {}, "You: "), text));
    input.value = "";
    const args = {[messageName]: text};
    if (hasConversation) args.conversation_id = conversation;
    const result = resultOf(await run(reply, args, output));
    if (result) log.append(h("li", {class: "assistant"}, h("strong", {}, "Assistant: "),
      typeof result.reply === "string" ? result.reply : JSON.stringify(result)));
    input.focus();
  };
  return h("div", {class: "ui chat"}, log,
    h("form", {class: "inline", onsubmit: send},
      h("label", {for: inputId}, "Message"), input, h("button", {type: "submit", class: "primary"}, "Send")),
    output);
}

// ------------------------------------------------------------------ forms for everything else

function methodForm(m) {
  const form = schemaForm(m.parameters && Object.keys(m.parameters).length ? m.parameters : {type: "object", properties: {}});
  const output = h("div", {class: "output"});
  return h("details", {class: "method", dataset: {method: m.name}},
    h("summary", {}, `${m.name}`, m.writes ? " (writes)" : "", m.description ? ` — ${m.description}` : ""),
    m.tool && m.available
      ? h("form", {onsubmit: async (event) => { event.preventDefault(); await run(m, form.get() || {}, output); }},
        form.element, h("button", {type: "submit"}, `Run ${m.name}`))
      : h("p", {class: "muted"}, "No tool implements this method."),
    output);
}

const UIS = {
  "media.player": [mediaPlayer, ["play", "pause", "set_volume"]],
  "filesystem.navigator": [fileNavigator, ["list_dir", "open_file", "delete_file"]],
  "code.editor": [codeEditor, ["open_file", "edit_line", "run_code"]],
  "chat.assistant": [chatBox, ["reply"]],
};

function viewSection(view, index) {
  const headingId = `iface-${index}`;
  const [builder, used] = UIS[view.ui] || [null, []];
  const others = view.methods.filter((m) => !used.includes(m.name));
  return h("section", {class: "interface", "aria-labelledby": headingId, dataset: {interface: view.interface}},
    h("h3", {id: headingId}, view.interface, " ",
      h("span", {class: `badge ${view.conforms ? "reads" : "writes"}`}, view.conforms ? "conforms" : "does not conform")),
    h("p", {class: "help"}, view.description, view.source ? ` · from ${view.source}` : ""),
    h("div", {class: "interface-columns"},
      h("div", {class: "interface-ui"},
        builder ? builder(view) : h("p", {class: "muted"}, "No dedicated view for this interface: its methods as forms."),
        others.length ? h("div", {class: "methods"}, builder ? h("h4", {}, "Other methods") : null, others.map(methodForm)) : null),
      h("aside", {class: "conformance", "aria-label": `conformance of ${view.interface}`},
        h("h4", {}, "Conformance"),
        view.problems.length
          ? h("ul", {class: "problems"}, view.problems.map((p) => h("li", {}, p)))
          : h("p", {}, "No problem found (as mcs interfaces check reports it)."))));
}

export class InterfacesPage {
  constructor(app) {
    this.app = app;
    this.body = document.getElementById("interfaces-body");
    this.loaded = false;
    this.loading = null;
  }

  show() {
    // One load at a time: the page is routed again while the first load is on its way, and a
    // second fill would replace the controls a keyboard user has already focused.
    if (!this.loading) this.loading = this.load().finally(() => { this.loading = null; });
    return this.loading;
  }

  async load() {
    if (this.loaded) return;
    fill(this.body, h("p", {class: "muted", role: "status"}, "Reading the interfaces and checking them…"));
    try {
      const found = await get("interfaces");
      this.loaded = true;
      fill(this.body,
        found.problems.length ? h("ul", {class: "problems"}, found.problems.map((p) => h("li", {}, p))) : null,
        found.interfaces.length
          ? found.interfaces.map(viewSection)
          : h("p", {class: "muted"}, "This driver declares no interface (media.player.v1, code.editor.v1…)."));
    } catch (error) {
      fill(this.body, failureView(error));
    }
  }
}
