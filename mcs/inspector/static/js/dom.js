// Small DOM helpers shared by every page of the inspector.

/** An element: h("button", {type: "button", onclick: f}, "Run"). Props starting with "on" are listeners. */
export function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      element.addEventListener(key.slice(2), value);
    } else if (key === "class") {
      element.className = value;
    } else if (key === "dataset") {
      Object.assign(element.dataset, value);
    } else if (key in element && !key.includes("-") && typeof value !== "string") {
      element[key] = value;
    } else {
      element.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
}

/** Replace the content of `element` with `children`. */
export function fill(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

/** JSON as people read it. */
export function pretty(value) {
  return JSON.stringify(value, null, 2);
}

/** A <pre> holding JSON or text. */
export function codeBlock(value, label) {
  const text = typeof value === "string" ? value : pretty(value);
  return h("pre", {class: "code", tabindex: "0", "aria-label": label}, text);
}

let counter = 0;
/** A unique id for label/input pairs. */
export function uid(prefix = "f") {
  counter += 1;
  return `${prefix}-${counter}`;
}
