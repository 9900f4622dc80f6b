import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** One registry per service instance (tests build several in one process). */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'mailsvc_' });
  return {
    registry,
    httpRequests: new Counter({
      name: 'mailsvc_http_requests_total',
      help: 'HTTP requests by method, route and status code',
      labelNames: ['method', 'route', 'status'] as const,
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'mailsvc_http_request_duration_seconds',
      help: 'HTTP request duration by route',
      labelNames: ['method', 'route'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
