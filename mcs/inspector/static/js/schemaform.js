// A form generated from a JSON Schema: nested objects, arrays, enums, oneOf/anyOf, formats,
// defaults and required marks. Each field is {element, get(), set(value)}; get() returns
// undefined for an optional field left empty, so it is left out of the arguments.
// What a form cannot show (deep nesting, free-form objects, tuples) gets a JSON text box.

import {h, uid} from "./dom.js";

const MAX_DEPTH = 6;
const INPUT_TYPES = {date: "date", email: "email", uri: "url", url: "url", time: "time", password: "password"};

/** The form for `schema` (a tool's input schema). `set(value)` fills it from arguments. */
export function schemaForm(schema) {
  const context = {root: schema || {}};
  return field(schema || {type: "object"}, context, {name: "", label: "", required: true, depth: 0, top: true});
}

function resolve(schema, context, seen = 0) {
  if (!schema || typeof schema !== "object") return {};
  if (typeof schema.$ref === "string" && schema.$ref.startsWith("#/") && seen < 8) {
    let target = context.root;
    for (const part of schema.$ref.slice(2).split("/")) {
      target = target && target[part.replaceAll("~1", "/").replaceAll("~0", "~")];
    }
    const {$ref, ...rest} = schema;
    return resolve({...(target || {}), ...rest}, context, seen + 1);
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length) {
    const merged = {...schema, properties: {...(schema.properties || {})}, required: [...(schema.required || [])]};
    delete merged.allOf;
    for (const part of schema.allOf.map((s) => resolve(s, context, seen + 1))) {
      Object.assign(merged.properties, part.properties || {});
      merged.required.push(...(part.required || []));
      if (part.type && !merged.type) merged.type = part.type;
    }
    return merged;
  }
  return schema;
}

function typeOf(schema) {
  let type = schema.type;
  if (Array.isArray(type)) type = type.find((t) => t !== "null") || "null";
  if (!type && schema.properties) type = "object";
  if (!type && schema.items) type = "array";
  return type;
}

function field(raw, context, options) {
  const schema = resolve(raw, context);
  if (options.depth > MAX_DEPTH) return jsonField(schema, options);
  const variants = schema.oneOf || schema.anyOf;
  if (Array.isArray(variants) && variants.length) return variantField(schema, variants, context, options);
  if (Array.isArray(schema.enum)) return enumField(schema, options);
  if (schema.const !== undefined) return constField(schema, options);
  switch (typeOf(schema)) {
    case "object": return objectField(schema, context, options);
    case "array": return arrayField(schema, context, options);
    case "boolean": return booleanField(schema, options);
    case "integer": case "number": return numberField(schema, options);
    case "string": return stringField(schema, options);
    default: return jsonField(schema, options);
  }
}

function labelFor(id, schema, options) {
  const text = options.label || schema.title || options.name;
  return h("label", {for: id},
    h("span", {class: "field-name"}, text),
    options.required && !options.top ? h("span", {class: "required", title: "required"}, " *") : null);
}

function help(schema, id) {
  const bits = [];
  if (schema.description) bits.push(schema.description);
  if (schema.format) bits.push(`format: ${schema.format}`);
  if (schema.minimum !== undefined) bits.push(`minimum ${schema.minimum}`);
  if (schema.maximum !== undefined) bits.push(`maximum ${schema.maximum}`);
  if (schema.pattern) bits.push(`pattern ${schema.pattern}`);
  if (schema.default !== undefined) bits.push(`default ${JSON.stringify(schema.default)}`);
  return bits.length ? h("small", {id, class: "help"}, bits.join(" · ")) : null;
}

function row(schema, options, control, id) {
  const helpId = `${id}-help`;
  const note = help(schema, helpId);
  if (note) control.setAttribute("aria-describedby", helpId);
  if (options.required && !options.top) control.setAttribute("aria-required", "true");
  return h("div", {class: "field"}, labelFor(id, schema, options), control, note);
}

function stringField(schema, options) {
  const id = uid();
  const long = schema.format === "textarea" || (schema.maxLength || 0) > 200;
  const control = long
    ? h("textarea", {id, rows: 3, name: options.name})
    : h("input", {id, name: options.name, type: INPUT_TYPES[schema.format] || "text"});
  if (schema.format === "date-time") control.placeholder = "2025-01-31T12:00:00Z";
  if (schema.pattern) control.setAttribute("pattern", schema.pattern);
  if (schema.maxLength !== undefined) control.maxLength = schema.maxLength;
  const element = row(schema, options, control, id);
  const api = {
    element,
    get: () => (control.value === "" && !options.required ? undefined : control.value),
    set: (value) => { control.value = value === undefined || value === null ? "" : String(value); },
  };
  api.set(schema.default);
  return api;
}

function numberField(schema, options) {
  const id = uid();
  const control = h("input", {id, name: options.name, type: "number", step: typeOf(schema) === "integer" ? "1" : "any"});
  if (schema.minimum !== undefined) control.min = schema.minimum;
  if (schema.maximum !== undefined) control.max = schema.maximum;
  const element = row(schema, options, control, id);
  const api = {
    element,
    get: () => {
      if (control.value === "") return options.required ? null : undefined;
      const number = Number(control.value);
      return Number.isNaN(number) ? control.value : number;
    },
    set: (value) => { control.value = value === undefined || value === null ? "" : String(value); },
  };
  api.set(schema.default);
  return api;
}

function booleanField(schema, options) {
  const id = uid();
  if (options.required) {
    const control = h("input", {id, name: options.name, type: "checkbox"});
    const api = {element: row(schema, options, control, id), get: () => control.checked,
      set: (value) => { control.checked = value === true; }};
    api.set(schema.default);
    return api;
  }
  return choiceField(schema, options, [["", "(not set)"], ["true", "true"], ["false", "false"]],
    (text) => (text === "" ? undefined : text === "true"), (value) => (value === undefined ? "" : String(value)));
}

function enumField(schema, options) {
  const choices = schema.enum.map((value) => [JSON.stringify(value), value === null ? "null" : String(value)]);
  if (!options.required || schema.default === undefined) choices.unshift(["", options.required ? "(choose)" : "(not set)"]);
  return choiceField(schema, options, choices,
    (text) => (text === "" ? (options.required ? null : undefined) : JSON.parse(text)),
    (value) => (value === undefined ? "" : JSON.stringify(value)));
}

function choiceField(schema, options, choices, read, write) {
  const id = uid();
  const control = h("select", {id, name: options.name}, choices.map(([value, text]) => h("option", {value}, text)));
  const api = {element: row(schema, options, control, id), get: () => read(control.value),
    set: (value) => { control.value = write(value); }};
  api.set(schema.default);
  return api;
}

function constField(schema, options) {
  const id = uid();
  const control = h("output", {id}, JSON.stringify(schema.const));
  return {element: row(schema, options, control, id), get: () => schema.const, set: () => {}};
}

function jsonField(schema, options) {
  const id = uid();
  const control = h("textarea", {id, name: options.name, rows: 3, class: "json", spellcheck: "false",
    placeholder: typeOf(schema) === "array" ? "[ ]" : "{ }"});
  const element = row(schema, options, control, id);
  const error = h("small", {class: "error", role: "status"});
  element.append(error);
  const api = {
    element,
    get: () => {
      error.textContent = "";
      if (control.value.trim() === "") return options.required ? null : undefined;
      try {
        return JSON.parse(control.value);
      } catch {
        error.textContent = "not valid JSON: sent as text";
        return control.value;
      }
    },
    set: (value) => { control.value = value === undefined ? "" : JSON.stringify(value, null, 2); },
  };
  api.set(schema.default);
  return api;
}

function objectField(schema, context, options) {
  const properties = schema.properties || {};
  const names = Object.keys(properties);
  if (!names.length && schema.additionalProperties !== false && !options.top) return jsonField(schema, options);
  const required = new Set(schema.required || []);
  const children = names.map((name) => [name, field(properties[name], context,
    {name, required: required.has(name), depth: options.depth + 1})]);
  const body = children.map(([, child]) => child.element);
  const element = options.top
    ? h("div", {class: "object top"}, body.length ? body : h("p", {class: "muted"}, "This tool takes no arguments."))
    : h("fieldset", {class: "object"},
      h("legend", {}, options.label || schema.title || options.name,
        options.required ? h("span", {class: "required", title: "required"}, " *") : null),
      schema.description ? h("small", {class: "help"}, schema.description) : null, body);
  return {
    element,
    get: () => {
      const value = {};
      for (const [name, child] of children) {
        const item = child.get();
        if (item !== undefined) value[name] = item;
      }
      return !options.top && !options.required && Object.keys(value).length === 0 ? undefined : value;
    },
    set: (value) => {
      for (const [name, child] of children) child.set(value && typeof value === "object" ? value[name] : undefined);
    },
  };
}

function arrayField(schema, context, options) {
  if (Array.isArray(schema.items) || schema.prefixItems) return jsonField(schema, options);
  const itemSchema = schema.items || {};
  const list = h("ol", {class: "array-items"});
  let items = [];
  const legend = options.label || schema.title || options.name;
  const add = (value) => {
    const child = field(itemSchema, context, {name: `${options.name}[${items.length}]`,
      label: `item ${items.length + 1}`, required: true, depth: options.depth + 1});
    if (value !== undefined) child.set(value);
    const entry = {child};
    const remove = h("button", {type: "button", class: "small", onclick: () => {
      items = items.filter((other) => other !== entry);
      entry.li.remove();
    }}, `Remove item from ${legend}`);
    entry.li = h("li", {}, child.element, remove);
    items.push(entry);
    list.append(entry.li);
    return child;
  };
  const element = h("fieldset", {class: "array"},
    h("legend", {}, legend, options.required ? h("span", {class: "required", title: "required"}, " *") : null),
    schema.description ? h("small", {class: "help"}, schema.description) : null,
    list,
    h("button", {type: "button", class: "small", onclick: () => {
      const child = add();
      const focusable = child.element.querySelector("input, select, textarea");
      if (focusable) focusable.focus();
    }}, `Add item to ${legend}`));
  const api = {
    element,
    get: () => {
      const values = items.map((entry) => entry.child.get()).filter((v) => v !== undefined);
      return values.length === 0 && !options.required ? undefined : values;
    },
    set: (value) => {
      items = [];
      list.replaceChildren();
      if (Array.isArray(value)) value.forEach((item) => add(item));
    },
  };
  if (Array.isArray(schema.default)) api.set(schema.default);
  return api;
}

function variantField(schema, variants, context, options) {
  const id = uid();
  const resolved = variants.map((variant) => resolve(variant, context));
  const titles = resolved.map((variant, index) => variant.title || typeOf(variant) || `option ${index + 1}`);
  const select = h("select", {id, "aria-label": `${options.name || "value"}: which shape`},
    titles.map((title, index) => h("option", {value: String(index)}, `${index + 1}. ${title}`)));
  const holder = h("div", {class: "variant"});
  let current = null;
  const choose = (index) => {
    select.value = String(index);
    const base = {...schema};
    delete base.oneOf;
    delete base.anyOf;
    current = field({...base, ...resolved[index]}, context, {...options, top: false, label: options.label || options.name});
    holder.replaceChildren(current.element);
  };
  select.addEventListener("change", () => choose(Number(select.value)));
  choose(0);
  const element = h("div", {class: "field variant-field"},
    h("label", {for: id}, `${options.name || "value"}: one of ${variants.length} shapes`), select, holder);
  return {
    element,
    get: () => current.get(),
    set: (value) => {
      const index = resolved.findIndex((variant) => matches(variant, value));
      choose(index < 0 ? 0 : index);
      current.set(value);
    },
  };
}

function matches(schema, value) {
  const type = typeOf(schema);
  if (value === undefined || value === null) return type === "null";
  if (Array.isArray(schema.enum)) return schema.enum.includes(value);
  if (type === "array") return Array.isArray(value);
  if (type === "object") return typeof value === "object" && !Array.isArray(value);
  if (type === "integer") return Number.isInteger(value);
  if (type === "number") return typeof value === "number";
  return typeof value === type;
}
