/**
 * The one catalogue of errors the service raises on purpose. The API renders each as
 * `{"error": message}` with its status.
 */
export const ERROR_CODES = {
  BAD_REQUEST: { status: 400 },
  UNAUTHORIZED: { status: 401 },
  FORBIDDEN: { status: 403 },
  NOT_FOUND: { status: 404 },
  CONFLICT: { status: 409 },
  PAYLOAD_TOO_LARGE: { status: 413 },
  UNSUPPORTED_MEDIA_TYPE: { status: 415 },
  VALIDATION: { status: 422 },
  RATE_LIMITED: { status: 429 },
  UNAVAILABLE: { status: 503 },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export const INVALID_API_KEY = 'Invalid or missing API key';

export class ServiceError extends Error {
  readonly status: number;
  /** Extra response headers (e.g. Retry-After). */
  readonly headers: Record<string, string>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ServiceError';
    this.status = ERROR_CODES[code].status;
    this.headers = headers;
  }
}

export const unauthorized = () => new ServiceError('UNAUTHORIZED', INVALID_API_KEY);
export const notFound = () => new ServiceError('NOT_FOUND', 'Not found');
export const forbidden = (message: string) => new ServiceError('FORBIDDEN', message);
export const invalid = (message: string) => new ServiceError('VALIDATION', message);
export const conflict = (message: string) => new ServiceError('CONFLICT', message);
export const badRequest = (message: string) => new ServiceError('BAD_REQUEST', message);
