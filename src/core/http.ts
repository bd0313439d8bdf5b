/**
 * The HTTP port: how the core calls a server (an embedding provider). The plugin fills it with
 * Obsidian's `requestUrl` (no CORS, no `fetch`), the headless host with Node's `fetch`. A request
 * that gets no answer in `timeoutMs` rejects.
 */
export interface HttpRequest {
  url: string;
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: string;
  timeoutMs: number;
}

export interface HttpResponse {
  status: number;
  text: string;
}

export type HttpClient = (req: HttpRequest) => Promise<HttpResponse>;
