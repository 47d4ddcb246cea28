// The inspector's JSON API. Addresses are relative: the page lives under /TOKEN/, and so do they.

export class ApiError extends Error {
  constructor(status, body) {
    super((body && body.message) || `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

async function answer(response) {
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = {message: await response.text().catch(() => "")};
  }
  if (!response.ok) throw new ApiError(response.status, body);
  return body;
}

/** GET api/<path>?<params>. */
export async function get(path, params = {}) {
  const query = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== null && v !== ""));
  const suffix = query.toString() ? `?${query}` : "";
  return answer(await fetch(`api/${path}${suffix}`, {headers: {Accept: "application/json"}}));
}

/** POST api/<path> with a JSON body. */
export async function post(path, body) {
  return answer(await fetch(`api/${path}`, {
    method: "POST",
    headers: {"Content-Type": "application/json", Accept: "application/json"},
    body: JSON.stringify(body),
  }));
}
