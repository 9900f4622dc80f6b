/** The console's only way to the server: /api/v1 with the session cookie and the CSRF token. */
let csrfToken = '';

export interface Session {
  key_id: number;
  scope: string;
  csrf_token: string;
  expires_at: string;
  sandbox: boolean;
}

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Called when the session has ended (401): the console shows the sign-in form again. */
let onSignedOut: () => void = () => {};
export const whenSignedOut = (fn: () => void) => {
  onSignedOut = fn;
};

async function request<T>(method: string, url: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  const res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!res.ok) {
    const message = (parsed as { error?: string } | null)?.error ?? `Request failed with status ${res.status}`;
    if (res.status === 401 && !url.startsWith('/console/')) onSignedOut();
    throw new ApiError(res.status, message);
  }
  return parsed as T;
}

export const api = {
  get: <T>(path: string) => request<T>('GET', `/api/v1${path}`),
  post: <T>(path: string, body: unknown = {}) => request<T>('POST', `/api/v1${path}`, body),
  patch: <T>(path: string, body: unknown) => request<T>('PATCH', `/api/v1${path}`, body),
  delete: <T>(path: string) => request<T>('DELETE', `/api/v1${path}`),
};

export const query = (params: Record<string, string | number | undefined | null>): string => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
};

export async function currentSession(): Promise<Session | null> {
  try {
    const s = await request<Session>('GET', '/console/session');
    csrfToken = s.csrf_token;
    return s;
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return null;
    throw err;
  }
}

export async function signIn(apiKey: string): Promise<Session> {
  const s = await request<Session>('POST', '/console/session', { api_key: apiKey });
  csrfToken = s.csrf_token;
  return s;
}

export async function signOut(): Promise<void> {
  await request<void>('DELETE', '/console/session');
  csrfToken = '';
}
