// The one fetch wrapper: every API call goes through getJson, which turns a
// network failure, an HTTP error or a body that is not JSON into an ApiError
// with a sentence the page shows. Nothing here touches the DOM.
export class ApiError extends Error {
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

export async function getJson(path) {
  let response;
  try {
    response = await fetch(path, { headers: { Accept: 'application/json' } });
  } catch (e) {
    throw new ApiError(`Cannot reach memrec view (${e.message}). Is it still running?`, 0);
  }
  let body = null;
  try {
    body = await response.json();
  } catch {
    throw new ApiError(`${path} answered HTTP ${response.status} without JSON.`, response.status);
  }
  if (!response.ok) {
    const message = body && typeof body.error === 'string' ? body.error : `HTTP ${response.status}`;
    throw new ApiError(message, response.status);
  }
  return body;
}

export const api = {
  dumps: () => getJson('/api/dumps'),
  summary: (dump) => getJson(`/api/dumps/${encodeURIComponent(dump)}/summary`),
  timeline: (dump) => getJson(`/api/dumps/${encodeURIComponent(dump)}/timeline`),
  sites: (dump, sort, offset, limit) =>
    getJson(`/api/dumps/${encodeURIComponent(dump)}/sites?` + new URLSearchParams({ sort, offset, limit })),
  flame: (dump, metric) => getJson(`/api/dumps/${encodeURIComponent(dump)}/flame?` + new URLSearchParams({ metric })),
  site: (dump, id) => getJson(`/api/dumps/${encodeURIComponent(dump)}/sites/${encodeURIComponent(id)}`),
};
