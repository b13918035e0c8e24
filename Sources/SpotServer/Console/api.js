// Calls to SpotStore's HTTP API with the console's session cookie. Every call carries
// X-SpotStore-Console: 1, without which the server accepts the cookie for reads only.

/** An error the server answered, with its message in the server's words. */
export class APIError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** The server's message of a failed answer: {"error": {"message"}} or the status text. */
async function failure(response) {
  let message = `${response.status} ${response.statusText}`;
  try {
    const body = await response.json();
    message = body?.error?.message ?? message;
  } catch { /* not JSON */ }
  return new APIError(response.status, message);
}

/** A request to `path` (with `options` as fetch takes them); the answer's JSON, or null for 204. */
export async function call(path, options = {}) {
  const headers = new Headers(options.headers ?? {});
  headers.set('X-SpotStore-Console', '1');
  if (options.json !== undefined) {
    headers.set('Content-Type', 'application/json');
    options = { ...options, body: JSON.stringify(options.json) };
  }
  const response = await fetch(path, { ...options, headers, credentials: 'same-origin' });
  if (!response.ok) throw await failure(response);
  if (response.status === 204) return null;
  return response.json();
}

/** `segment` percent-encoded for a URL path, `/` included. */
export const encode = (segment) => encodeURIComponent(segment);

/** The API path of an object. */
export const objectPath = (bucket, name) => `/v0/b/${encode(bucket)}/o/${encode(name)}`;

/** The change that turns `current` into `wanted` as the API's PATCH bodies take it: every key of `wanted`, and `null` for each key it drops. */
export function replacing(current, wanted) {
  return { ...Object.fromEntries(Object.keys(current ?? {}).filter((key) => !(key in wanted)).map((key) => [key, null])), ...wanted };
}
