import { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real HTTP server on loopback with just enough of the GitHub REST API for sticky comments:
 *   GET   /repos/:o/:r/issues/:n/comments   (per_page / page, Link header, GitHub's cap of 100)
 *   POST  /repos/:o/:r/issues/:n/comments
 *   PATCH /repos/:o/:r/issues/comments/:id
 *   GET   /repos/:o/:r/pulls/:n               (number and head sha, as set by setPull)
 * Comments live in memory; every request is recorded; a wrong or missing token gets 401.
 * failNext() makes the next requests of a method fail, before or after taking effect.
 */

interface FakeComment {
  id: number;
  node_id: string;
  body: string;
  user: { login: string; id: number; type: 'User' | 'Bot' };
  created_at: string;
  updated_at: string;
  url: string;
  html_url: string;
  issue_url: string;
  /** Not part of the API: which issue it belongs to. */
  owner: string;
  repo: string;
  issue: number;
}

interface RecordedRequest {
  method: string;
  /** Path with query string, as sent. */
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body, the raw text when it is not JSON, undefined when empty. */
  body: unknown;
}

export interface FakeGithubOptions {
  /** The only token accepted (as `token X` or `Bearer X`). */
  token: string;
  /** Largest page the server hands out, whatever per_page asks (GitHub: 100). */
  maxPerPage?: number;
  /** Login of the token's user, the author of created comments. */
  login?: string;
}

export interface FakeGithub {
  /** http://127.0.0.1:PORT, to use as the API base URL. */
  url: string;
  requests: RecordedRequest[];
  /** All comments of an issue, oldest first (what the API would list). */
  comments(owner: string, repo: string, issue: number): FakeComment[];
  /** Seed a comment as if someone had posted it earlier (a login ending in [bot] is a Bot). */
  addComment(owner: string, repo: string, issue: number, body: string, login?: string): FakeComment;
  /**
   * The next `times` (default 1) requests of `method` answer `status`. With `applied`, the
   * request takes effect first and only the answer is an error (a 5xx after the write, or a
   * dropped response).
   */
  failNext(method: string, status: number, opts?: { times?: number; applied?: boolean }): void;
  /** A pull request whose head commit is `headSha`. */
  setPull(owner: string, repo: string, number: number, headSha: string): void;
  stop(): Promise<void>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}): void {
  const text = payload === undefined ? '' : JSON.stringify(payload);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

const publicView = ({ owner: _o, repo: _r, issue: _i, ...c }: FakeComment) => c;

function bodyField(body: unknown): string {
  if (typeof body !== 'object' || body === null || typeof (body as { body?: unknown }).body !== 'string') {
    throw new HttpError(422, 'Validation Failed: body must be a string');
  }
  return (body as { body: string }).body;
}

function positiveInt(value: string | null, fallback: number, name: string): number {
  if (value === null) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new HttpError(422, `Validation Failed: ${name}=${value}`);
  return Number(value);
}

export async function startFakeGithub(opts: FakeGithubOptions): Promise<FakeGithub> {
  const maxPerPage = opts.maxPerPage ?? 100;
  const login = opts.login ?? 'github-actions[bot]';
  const requests: RecordedRequest[] = [];
  const all: FakeComment[] = [];
  let nextId = 1000;
  // A clock that moves one second per comment, so "newest" is well defined.
  let clock = Date.UTC(2025, 0, 1);
  const now = () => {
    clock += 1000;
    return new Date(clock).toISOString().replace('.000Z', 'Z');
  };
  let base = '';
  const faults: Array<{ method: string; status: number; applied: boolean }> = [];
  const pulls = new Map<string, string>();

  const listOf = (owner: string, repo: string, issue: number) =>
    all.filter((c) => c.owner === owner && c.repo === repo && c.issue === issue);

  const addComment = (owner: string, repo: string, issue: number, body: string, author = login): FakeComment => {
    const id = nextId++;
    const at = now();
    const c: FakeComment = {
      id,
      node_id: `IC_${id}`,
      body,
      user: { login: author, id: 41898282, type: author.endsWith('[bot]') ? 'Bot' : 'User' },
      created_at: at,
      updated_at: at,
      url: `${base}/repos/${owner}/${repo}/issues/comments/${id}`,
      html_url: `https://github.example/${owner}/${repo}/pull/${issue}#issuecomment-${id}`,
      issue_url: `${base}/repos/${owner}/${repo}/issues/${issue}`,
      owner,
      repo,
      issue,
    };
    all.push(c);
    return c;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const raw = await readBody(req);
    let body: unknown;
    if (raw !== '') {
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
      }
    }
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    requests.push({ method, path, headers: req.headers, body });

    const auth = req.headers.authorization ?? '';
    if (auth !== `token ${opts.token}` && auth !== `Bearer ${opts.token}`) {
      send(res, 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest', status: '401' });
      return;
    }

    const f = faults.findIndex((x) => x.method === method);
    const fault = f >= 0 ? faults.splice(f, 1)[0] : undefined;
    if (fault && !fault.applied) {
      send(res, fault.status, { message: `injected failure (HTTP ${fault.status})` });
      return;
    }
    // An applied fault: the handlers below take effect, then the answer is replaced by the error.
    const reply: typeof send = fault
      ? (r) => send(r, fault.status, { message: `injected failure after applying (HTTP ${fault.status})` })
      : send;

    const url = new URL(path, base);
    const pull = /^\/repos\/([^/]+)\/([^/]+)\/pulls\/(\d+)$/.exec(url.pathname);
    const list = /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)\/comments$/.exec(url.pathname);
    const one = /^\/repos\/([^/]+)\/([^/]+)\/issues\/comments\/(\d+)$/.exec(url.pathname);
    try {
      if (pull && method === 'GET') {
        const [, owner, repo, n] = pull as unknown as [string, string, string, string];
        const sha = pulls.get(`${owner}/${repo}#${n}`);
        if (sha === undefined) throw new HttpError(404, 'Not Found');
        reply(res, 200, { number: Number(n), head: { sha } });
        return;
      }
      if (list && method === 'GET') {
        const [, owner, repo, n] = list as unknown as [string, string, string, string];
        const perPage = Math.min(maxPerPage, positiveInt(url.searchParams.get('per_page'), 30, 'per_page'));
        const page = positiveInt(url.searchParams.get('page'), 1, 'page');
        const comments = listOf(owner, repo, Number(n));
        const pages = Math.max(1, Math.ceil(comments.length / perPage));
        const link = (p: number, rel: string) => {
          const u = new URL(url.pathname, base);
          u.searchParams.set('per_page', String(perPage));
          u.searchParams.set('page', String(p));
          return `<${u.href}>; rel="${rel}"`;
        };
        const rels: string[] = [];
        if (page > 1) rels.push(link(page - 1, 'prev'), link(1, 'first'));
        if (page < pages) rels.push(link(page + 1, 'next'), link(pages, 'last'));
        reply(
          res,
          200,
          comments.slice((page - 1) * perPage, page * perPage).map(publicView),
          rels.length > 0 ? { link: rels.join(', ') } : {},
        );
        return;
      }
      if (list && method === 'POST') {
        const [, owner, repo, n] = list as unknown as [string, string, string, string];
        const created = addComment(owner, repo, Number(n), bodyField(body));
        reply(res, 201, publicView(created), { location: created.url });
        return;
      }
      if (one && method === 'PATCH') {
        const [, owner, repo, id] = one as unknown as [string, string, string, string];
        const c = all.find((x) => x.id === Number(id) && x.owner === owner && x.repo === repo);
        if (!c) throw new HttpError(404, 'Not Found');
        c.body = bodyField(body);
        c.updated_at = now();
        reply(res, 200, publicView(c));
        return;
      }
      throw new HttpError(404, 'Not Found');
    } catch (e) {
      if (e instanceof HttpError) send(res, e.status, { message: e.message, documentation_url: 'https://docs.github.com/rest' });
      else send(res, 500, { message: String(e) });
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => send(res, 500, { message: String(e) }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  base = `http://127.0.0.1:${port}`;

  return {
    url: base,
    requests,
    comments: (owner, repo, issue) => listOf(owner, repo, issue),
    addComment,
    failNext: (method, status, o = {}) => {
      for (let i = 0; i < (o.times ?? 1); i++) faults.push({ method: method.toUpperCase(), status, applied: o.applied ?? false });
    },
    setPull: (owner, repo, number, headSha) => void pulls.set(`${owner}/${repo}#${number}`, headSha),
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((e) => (e ? reject(e) : resolve()));
      }),
  };
}
