// Running calls from the page: the confirmation for writes, and how an outcome is shown
// (the result, or the error code and the message the model would read, the duration,
// and the policy and hook events of the call).

import {ApiError, post} from "./api.js";
import {codeBlock, fill, h} from "./dom.js";

/** Ask the person, in the page, before something that may change data runs. Resolves true or false. */
export function confirmWrite(tools, detail) {
  const dialog = document.getElementById("confirm");
  fill(dialog.querySelector("[data-slot=tools]"), tools.join(", "));
  fill(dialog.querySelector("[data-slot=detail]"), detail ? codeBlock(detail, "what will be sent") : "");
  return new Promise((resolve) => {
    const done = () => {
      dialog.removeEventListener("close", done);
      resolve(dialog.returnValue === "run");
    };
    dialog.addEventListener("close", done);
    dialog.returnValue = "";
    dialog.showModal();
    dialog.querySelector("button[value=cancel]").focus();
  });
}

/**
 * POST `path` with `body`. When the server answers 409 CONFIRMATION_REQUIRED, it sends the
 * exact content that would run (`preview`) and the confirmation of that content: the page
 * shows the preview, and if the person agrees, sends the same body again with that
 * confirmation. The server judges what writes, and a confirmation fits that content only.
 * Returns the outcome, or null when the person said no.
 */
export async function runConfirmed(path, body) {
  try {
    return await post(path, body);
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 409 && error.body.error === "CONFIRMATION_REQUIRED")) throw error;
    if (!(await confirmWrite(error.body.tools || [], error.body.preview))) return null;
    return post(path, {...body, confirmation: error.body.confirmation});
  }
}

/** Run one tool by name. */
export function callTool(tool, args) {
  return runConfirmed("call", {tool, arguments: args});
}

function eventsTable(events) {
  if (!events || !events.length) return h("p", {class: "muted"}, "No policy or hook ran for this call.");
  return h("table", {class: "events"},
    h("caption", {}, "Pipeline events of this call"),
    h("thead", {}, h("tr", {}, ["at (ms)", "stage", "name", "where", "outcome"].map((t) => h("th", {scope: "col"}, t)))),
    h("tbody", {}, events.map((event) => h("tr", {class: `event ${event.kind}`},
      h("td", {}, String(event.at_ms)),
      h("td", {}, event.kind),
      h("td", {}, event.name, event.hooks && event.hooks.length ? ` (${event.hooks.join(", ")})` : ""),
      h("td", {}, event.where),
      h("td", {}, [event.outcome, event.detail].filter(Boolean).join(": ") +
        (event.duration_ms !== undefined ? ` ${event.duration_ms} ms` : ""))))));
}

/** An outcome from api/call or api/reply/run, as the page shows it. */
export function outcomeView(outcome) {
  if (outcome === null) return h("p", {class: "muted", role: "status"}, "Not run: the confirmation was declined.");
  const status = outcome.ok
    ? h("p", {class: "status ok"}, outcome.passed_through ? "No call for this driver: the reply passes through unchanged." : "Result", ` · ${outcome.duration_ms} ms`)
    : h("p", {class: "status error"}, h("strong", {}, outcome.error), ` · ${outcome.duration_ms} ms`);
  const body = outcome.ok
    ? ("result" in outcome ? codeBlock(outcome.result, "result") : null)
    : h("div", {}, h("p", {}, "The model would read:"), codeBlock({error: outcome.error, message: outcome.message}, "error for the model"));
  return h("div", {class: "outcome", role: "status"}, status, body, eventsTable(outcome.events));
}

/** A failure of the request itself (not of the tool). */
export function failureView(error) {
  const message = error instanceof ApiError ? `${error.body && error.body.error ? error.body.error + ": " : ""}${error.message}` : String(error);
  return h("p", {class: "status error", role: "alert"}, message);
}
