// The one fetch wrapper: every API call goes through getJson, which turns a
// network failure, an HTTP error or a body that is not JSON into an ApiError
// with a sentence the page shows. Nothing here touches the DOM. docs/api.md
// is the contract; parameters that are null, undefined or '' are left out.
// `building` is set (a percent) when the answer needs the dump's allocation
// table and memrec view is still building it (HTTP 503): the page waits.
// `loading` likewise while memrec view still loads the dump itself.
export class ApiError extends Error {
  constructor(message, status, building, loading) {
    super(message);
    this.status = status;
    this.building = building;
    this.loading = loading;
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
    const percent = (key) => (Number.isInteger(body?.[key]) ? body[key] : undefined);
    throw new ApiError(message, response.status, percent('building'), percent('loading'));
  }
  return body;
}

export function query(params) {
  const out = new URLSearchParams();
  for (const [key, value] of Object.entries(params || {})) {
    if (value !== undefined && value !== null && value !== '') out.set(key, String(value));
  }
  const text = out.toString();
  return text ? `?${text}` : '';
}

const dumpPath = (dump) => `/api/dumps/${encodeURIComponent(dump)}`;

export const api = {
  dumps: () => getJson('/api/dumps'),
  summary: (dump, range) => getJson(`${dumpPath(dump)}/summary${query(range)}`),
  timeline: (dump, range) => getJson(`${dumpPath(dump)}/timeline${query(range)}`),
  // params: sort, offset, limit, from, to, at, spark; here and below raw, group (labels.js)
  sites: (dump, params) => getJson(`${dumpPath(dump)}/sites${query(params)}`),
  site: (dump, id, params) => getJson(`${dumpPath(dump)}/sites/${encodeURIComponent(id)}${query(params)}`),
  // params: from, to, buckets, raw, group
  siteSeries: (dump, id, params) => getJson(`${dumpPath(dump)}/sites/${encodeURIComponent(id)}/series${query(params)}`),
  // params: metric, from, to, at
  flame: (dump, params) => getJson(`${dumpPath(dump)}/flame${query(params)}`),
  // params: metric, from, to, at, raw, search, name, limit
  functions: (dump, params) => getJson(`${dumpPath(dump)}/functions${query(params)}`),
  instant: (dump, at, params) => getJson(`${dumpPath(dump)}/instant${query({ at, ...params })}`),
  allocations: (dump, params) => getJson(`${dumpPath(dump)}/allocations${query(params)}`),
  allocation: (dump, index, params) => getJson(`${dumpPath(dump)}/allocations/${encodeURIComponent(index)}${query(params)}`),
  // params: from, to, limit
  maps: (dump, params) => getJson(`${dumpPath(dump)}/maps${query(params)}`),
  threads: (dump) => getJson(`${dumpPath(dump)}/threads`),
  // params: base, new, metric, raw, base_from, base_to, new_from, new_to; diffSites also sort, limit
  diffFlame: (params) => getJson(`/api/diff/flame${query(params)}`),
  diffSites: (params) => getJson(`/api/diff/sites${query(params)}`),
};

// A download, not a fetch: the browser follows the link (Content-Disposition).
export const exportUrl = (dump, params) => `${dumpPath(dump)}/export${query(params)}`;
export const diffReportUrl = (params) => `/api/diff/report${query(params)}`;
