// The few autocannon (v8) fields the benchmarks use; the package ships no types.
declare module 'autocannon' {
  interface Histogram { average: number, p50: number, p99: number, total: number }
  interface Result { requests: Histogram, latency: Histogram, errors: number, non2xx: number, '2xx': number }
  /** One request of a sequence: `setupRequest` may rewrite it per send, `onResponse` sees each answer. */
  interface RequestSpec {
    setupRequest?: (request: Record<string, unknown>) => Record<string, unknown>
    onResponse?: (status: number, body: string) => void
  }
  interface Options {
    url: string
    method?: string
    connections?: number
    duration?: number
    headers?: Record<string, string>
    body?: string
    requests?: RequestSpec[]
  }
  function autocannon (options: Options): Promise<Result>
  export default autocannon
}
