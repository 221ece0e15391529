import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real HTTP server on loopback speaking the Actions cache service's v1 protocol, as
 * @actions/cache uses it with ACTIONS_CACHE_URL (GitHub Enterprise Server's cache service):
 *   GET   /_apis/artifactcache/cache?keys=K1,K2&version=V   a hit (200 + archiveLocation) or 204
 *   POST  /_apis/artifactcache/caches                       reserve {key, version} -> {cacheId}, 409 when taken
 *   PATCH /_apis/artifactcache/caches/:id                   a chunk (Content-Range: bytes a-b/*)
 *   POST  /_apis/artifactcache/caches/:id                   commit {size}
 *   GET   /archives/:id                                     the archive's bytes
 * Entries match on version and on the key exactly or, for the keys after the first, as a prefix,
 * like the service. Every request is recorded with the key and version it named.
 */

interface CacheEntry {
  id: number;
  key: string;
  version: string;
  committed: boolean;
  bytes: Buffer;
}

interface CacheRequest {
  kind: 'lookup' | 'reserve' | 'upload' | 'commit' | 'download';
  keys?: string[];
  version?: string;
  /** lookup: whether it hit. */
  hit?: boolean;
  id?: number;
}

export interface FakeCache {
  /** The ACTIONS_CACHE_URL value (with its trailing slash). */
  url: string;
  token: string;
  requests: CacheRequest[];
  entries: CacheEntry[];
  stop(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function json(res: ServerResponse, status: number, payload?: unknown): void {
  const text = payload === undefined ? '' : JSON.stringify(payload);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export async function startFakeCache(token = 'runtime-token-for-the-cache'): Promise<FakeCache> {
  const requests: CacheRequest[] = [];
  const entries: CacheEntry[] = [];
  let base = '';

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = await readBody(req);
    const url = new URL(req.url ?? '/', base);
    const method = req.method ?? 'GET';
    if (url.pathname.startsWith('/archives/') && method === 'GET') {
      const id = Number(url.pathname.slice('/archives/'.length));
      const entry = entries.find((e) => e.id === id && e.committed);
      requests.push({ kind: 'download', id });
      if (!entry) return json(res, 404, { message: 'no such archive' });
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': entry.bytes.length });
      res.end(entry.bytes);
      return;
    }
    if (req.headers.authorization !== `Bearer ${token}`) return json(res, 401, { message: 'bad runtime token' });
    const one = /^\/_apis\/artifactcache\/caches\/(\d+)$/.exec(url.pathname);
    if (url.pathname === '/_apis/artifactcache/cache' && method === 'GET') {
      const keys = (url.searchParams.get('keys') ?? '').split(',');
      const version = url.searchParams.get('version') ?? '';
      const usable = entries.filter((e) => e.committed && e.version === version);
      const found = keys
        .map((k, i) => usable.find((e) => e.key === k) ?? (i > 0 ? usable.find((e) => e.key.startsWith(k)) : undefined))
        .find(Boolean);
      requests.push({ kind: 'lookup', keys, version, hit: found !== undefined });
      if (!found) return json(res, 204);
      return json(res, 200, { cacheKey: found.key, scope: 'refs/heads/main', archiveLocation: `${base}/archives/${found.id}` });
    }
    if (url.pathname === '/_apis/artifactcache/caches' && method === 'POST') {
      const { key, version } = JSON.parse(body.toString('utf8')) as { key: string; version: string };
      requests.push({ kind: 'reserve', keys: [key], version });
      if (entries.some((e) => e.key === key && e.version === version))
        return json(res, 409, { message: `Cache already exists. Key: ${key}, Version: ${version}` });
      const entry: CacheEntry = { id: entries.length + 1, key, version, committed: false, bytes: Buffer.alloc(0) };
      entries.push(entry);
      return json(res, 201, { cacheId: entry.id });
    }
    if (one && method === 'PATCH') {
      const entry = entries.find((e) => e.id === Number(one[1]) && !e.committed);
      const range = /^bytes (\d+)-(\d+)\/\*$/.exec(String(req.headers['content-range'] ?? ''));
      requests.push({ kind: 'upload', id: Number(one[1]) });
      if (!entry || !range) return json(res, 400, { message: 'bad upload' });
      const start = Number(range[1]);
      const grown = Buffer.alloc(Math.max(entry.bytes.length, start + body.length));
      entry.bytes.copy(grown);
      body.copy(grown, start);
      entry.bytes = grown;
      return json(res, 204);
    }
    if (one && method === 'POST') {
      const entry = entries.find((e) => e.id === Number(one[1]) && !e.committed);
      const { size } = JSON.parse(body.toString('utf8')) as { size: number };
      requests.push({ kind: 'commit', id: Number(one[1]) });
      if (!entry || size !== entry.bytes.length) return json(res, 400, { message: 'size mismatch' });
      entry.committed = true;
      return json(res, 204);
    }
    json(res, 404, { message: 'Not Found' });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => json(res, 500, { message: String(e) }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${base}/`,
    token,
    requests,
    entries,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((e) => (e ? reject(e) : resolve()));
      }),
  };
}
