// tests/mcp/bearer-preload.mjs — gives a program that has no header option (the MCP
// conformance CLI) an OAuth bearer token: loaded with `node --import`, it wraps
// globalThis.fetch, undici's `request` (the dns-rebinding-protection scenario sends its
// raw requests with undici) and node:http's `request` (http-header-validation uses it)
// so that every request to one origin carries `Authorization: Bearer <token>`, unless
// the request sets Authorization itself.
//
//   MCP_BEARER_TOKEN=T MCP_BEARER_ORIGIN=http://localhost:8080 \
//     node --import tests/lib/conformance-node20.mjs --import tests/mcp/bearer-preload.mjs \
//       tests/node_modules/@modelcontextprotocol/conformance/dist/index.js server --url ...
//
// MCP_BEARER_ORIGIN (scheme://host:port) limits the token to the gateway under test: the
// conformance CLI also talks to mock servers of its own, which never see it. Without a
// token the module does nothing. MCP_BEARER_UNDICI names the file (a conformance bundle)
// from which `undici` is resolved (default: tests/, with the pinned node_modules).
import http from 'node:http';
import { createRequire } from 'node:module';

const token = process.env.MCP_BEARER_TOKEN ?? '';
const origin = process.env.MCP_BEARER_ORIGIN ?? '';
const value = `Bearer ${token}`;

/** headers (a plain object) with Authorization added unless some spelling of it is there. */
function withBearer(headers = {}) {
  if (Object.keys(headers).some((h) => h.toLowerCase() === 'authorization')) return headers;
  return { ...headers, authorization: value };
}

function ours(url) {
  try {
    return new URL(String(url)).origin === origin;
  } catch {
    return false;
  }
}

if (token && origin) {
  // fetch(input, init): input is a string, a URL or a Request.
  const realFetch = globalThis.fetch;
  globalThis.fetch = function fetchWithBearer(input, init) {
    const url = input instanceof Request ? input.url : input;
    if (!ours(url)) return realFetch(input, init);
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    if (!headers.has('authorization')) headers.set('authorization', value);
    return realFetch(input, { ...init, headers });
  };

  // undici is CommonJS: an ES module importing `request` from it gets the value of
  // module.exports.request when the import is linked, which is after this preload ran.
  // So replacing it in the shared require cache reaches the conformance bundle.
  try {
    const from = process.env.MCP_BEARER_UNDICI || new URL('../', import.meta.url).pathname;
    const undici = createRequire(from)('undici');
    const realRequest = undici.request;
    undici.request = function requestWithBearer(url, opts = {}) {
      if (!ours(url)) return realRequest.call(this, url, opts);
      let headers = opts.headers ?? {};
      if (Array.isArray(headers)) {	// [name, value, name, value, ...]
        const has = headers.some((h, i) => i % 2 === 0 && String(h).toLowerCase() === 'authorization');
        if (!has) headers = [...headers, 'authorization', value];
      } else {
        headers = withBearer(headers);
      }
      return realRequest.call(this, url, { ...opts, headers });
    };
  } catch (e) {
    process.stderr.write(`bearer-preload: undici not wrapped: ${e.message}\n`);
  }

  // http.request(options[, cb]) or http.request(url[, options][, cb]). The bundles import
  // node:http's default export and look `request` up on it at each call.
  const realHttpRequest = http.request;
  http.request = function httpRequestWithBearer(...args) {
    if (typeof args[0] === 'string' || args[0] instanceof URL) {
      const target = new URL(args[0]);
      if (!ours(target)) return realHttpRequest.apply(this, args);
      const o = args[1] && typeof args[1] === 'object' ? args[1] : {};
      const rest = o === args[1] ? args.slice(2) : args.slice(1);
      return realHttpRequest.call(this, target, { ...o, headers: withBearer(o.headers) }, ...rest);
    }
    const o = args[0] ?? {};
    const host = o.hostname ?? String(o.host ?? 'localhost').replace(/:\d+$/, '');
    const target = `${o.protocol ?? 'http:'}//${host.includes(':') ? `[${host}]` : host}:${o.port ?? 80}`;
    if (!ours(target) || Array.isArray(o.headers)) return realHttpRequest.apply(this, args);
    return realHttpRequest.call(this, { ...o, headers: withBearer(o.headers) }, ...args.slice(1));
  };
}
