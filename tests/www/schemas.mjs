#!/usr/bin/env node
// tests/www/schemas.mjs — the component schemas of www/openapi.json encode the field rules of the
// gateway's public HTTP surface: each case is a JSON value that one schema must accept or reject.
// TAP on stdout; exits non-zero when a test failed. Needs `npm ci --prefix tests` first.
import { loadChecked } from './lib/openapi-ajv.mjs';
import { done, ok } from '../lib/tap.mjs';


const api = loadChecked('www/openapi.json schemas compile with ajv (draft 2020-12, strict)');

const names = [
  'JsonRpcId', 'JsonRpcRequest', 'JsonRpcNotification', 'JsonRpcSuccessResponse', 'JsonRpcErrorResponse',
  'JsonRpcError', 'JsonRpcClientPayload', 'JsonRpcServerPayload', 'ToolCallParams', 'HealthResponse', 'HealthDependency',
  'McpMetadata', 'OAuthProtectedResourceMetadata', 'OAuthAuthorizationServerMetadata', 'McpServerManifest',
  'HttpError',
];
const missing = names.filter((s) => !api.doc.components.schemas[s]);
ok(missing.length === 0, 'every schema of the public HTTP surface is under components/schemas', { missing });

const req = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
const note = { jsonrpc: '2.0', method: 'notifications/initialized' };
const okResp = { jsonrpc: '2.0', id: 1, result: { anything: true } };
const errResp = { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request' } };
const call = (params) => ({ jsonrpc: '2.0', id: 'c', method: 'tools/call', params });

// [schema, accept?, what, value]
const cases = [
  ['JsonRpcClientPayload', true, 'a request with an integer id', req],
  ['JsonRpcClientPayload', true, 'a request with a string id and array params', { ...req, id: 'x', params: [1] }],
  ['JsonRpcClientPayload', true, 'a notification', note],
  ['JsonRpcClientPayload', true, 'a batch of one', [req]],
  ['JsonRpcClientPayload', true, 'a batch of a request and a notification', [req, note]],
  ['JsonRpcClientPayload', false, 'an empty batch', []],
  ['JsonRpcClientPayload', false, 'jsonrpc "1.0"', { ...req, jsonrpc: '1.0' }],
  ['JsonRpcClientPayload', false, 'jsonrpc as the number 2.0', { ...req, jsonrpc: 2.0 }],
  ['JsonRpcClientPayload', false, 'a non-integer numeric id', { ...req, id: 1.5 }],
  ['JsonRpcClientPayload', false, 'an object id', { ...req, id: {} }],
  ['JsonRpcClientPayload', false, 'an empty method', { ...req, method: '' }],
  ['JsonRpcClientPayload', false, 'a missing method', { jsonrpc: '2.0', id: 1 }],
  ['JsonRpcClientPayload', false, 'string params', { ...req, params: 'x' }],
  ['JsonRpcClientPayload', false, 'a request with another member', { ...req, extra: 1 }],
  ['JsonRpcClientPayload', false, 'a notification with another member', { ...note, extra: 1 }],
  ['JsonRpcClientPayload', false, 'a batch holding an invalid element', [req, { jsonrpc: '2.0' }]],
  ['JsonRpcRequest', false, 'a request with a null id', { ...req, id: null }],
  ['JsonRpcClientPayload', true, 'tools/call with name and arguments', call({ name: 't', arguments: { a: 1 } })],
  ['JsonRpcClientPayload', false, 'tools/call without params', { jsonrpc: '2.0', id: 2, method: 'tools/call' }],
  ['JsonRpcClientPayload', false, 'tools/call without a name', call({ arguments: {} })],
  ['JsonRpcClientPayload', false, 'tools/call with non-object arguments', call({ name: 't', arguments: [] })],
  ['ToolCallParams', false, 'a non-string tool name', { name: 7 }],
  ['JsonRpcServerPayload', true, 'a success response with a null result', { ...okResp, result: null }],
  ['JsonRpcServerPayload', true, 'an error response with a null id', errResp],
  ['JsonRpcServerPayload', true, 'an error response with data', { ...errResp, id: 3, error: { ...errResp.error, data: [1] } }],
  ['JsonRpcServerPayload', true, 'a notification', note],
  ['JsonRpcServerPayload', true, 'a server-to-client request', { jsonrpc: '2.0', id: 9, method: 'sampling/createMessage', params: {} }],
  ['JsonRpcServerPayload', true, 'a batch of responses', [okResp, errResp]],
  ['JsonRpcServerPayload', false, 'an empty batch', []],
  ['JsonRpcServerPayload', false, 'a success response without result', { jsonrpc: '2.0', id: 1 }],
  ['JsonRpcServerPayload', false, 'a response with both result and error', { ...okResp, error: errResp.error }],
  ['JsonRpcServerPayload', false, 'an error with a non-integer code', { ...errResp, error: { code: 1.5, message: 'x' } }],
  ['JsonRpcServerPayload', false, 'an error without a message', { ...errResp, error: { code: 1 } }],
  ['JsonRpcSuccessResponse', false, 'a success response with a null id', { ...okResp, id: null }],
  ['HealthResponse', true, 'an empty document', {}],
  ['HealthResponse', true, 'all fields and an extra one', { status: 'ok', service: 's', version: '1', timestamp: '2026-01-01T00:00:00Z', x: 1 }],
  ['HealthResponse', false, 'a timestamp that is not date-time', { timestamp: 'yesterday' }],
  ['HealthResponse', true, 'degraded, with reasons and its dependencies', {
    status: 'degraded', reasons: ['upstream gh is down since 2026-01-01T00:00:00Z'],
    dependencies: [{ dependency: 'upstream', name: 'gh', state: 'down', since: '2026-01-01T00:00:00Z', detail: 'no answer' },
      { dependency: 'introspection', state: 'unknown' }, { dependency: 'redis', state: 'up', since: '2026-01-01T00:00:00Z' }],
  }],
  ['HealthResponse', false, 'dependencies that are not an array', { dependencies: { upstream: 'down' } }],
  ['HealthResponse', false, 'a dependency in a state that is not up, down or unknown', { dependencies: [{ dependency: 'redis', state: 'fine' }] }],
  ['HealthDependency', false, 'a dependency without its state', { dependency: 'state_file', since: '2026-01-01T00:00:00Z' }],
  ['HealthDependency', false, 'a dependency of no known kind', { dependency: 'database', state: 'up' }],
  ['HealthDependency', false, 'a since that is not date-time', { dependency: 'redis', state: 'up', since: 'an hour ago' }],
  ['McpMetadata', true, 'an empty document', {}],
  ['McpMetadata', true, 'an authorization object with extra members', { endpoint: 'https://gw.example.com/mcp', authorization: { a: 1 } }],
  ['McpMetadata', false, 'an endpoint that is not a URI', { endpoint: 'not a uri' }],
  ['McpMetadata', false, 'a non-object authorization', { authorization: 'yes' }],
  ['OAuthProtectedResourceMetadata', true, 'only resource, plus an extra member', { resource: 'https://gw.example.com/mcp', resource_name: 'x' }],
  ['OAuthProtectedResourceMetadata', false, 'no resource', { authorization_servers: ['https://idp.example.com'] }],
  ['OAuthProtectedResourceMetadata', false, 'an authorization server that is not a URI', { resource: 'https://gw.example.com/mcp', authorization_servers: ['idp'] }],
  ['OAuthProtectedResourceMetadata', false, 'a non-string scope', { resource: 'https://gw.example.com/mcp', scopes_supported: [1] }],
  ['OAuthAuthorizationServerMetadata', true, 'only issuer', { issuer: 'https://idp.example.com' }],
  ['OAuthAuthorizationServerMetadata', false, 'no issuer', { token_endpoint: 'https://idp.example.com/token' }],
  ['OAuthAuthorizationServerMetadata', false, 'a token endpoint that is not a URI', { issuer: 'https://idp.example.com', token_endpoint: 'token' }],
  ['McpServerManifest', true, 'name and version, plus remotes and an extra member', { name: 'a/b', version: '1.0.0', remotes: [{ type: 't', url: 'u' }], x: 1 }],
  ['McpServerManifest', false, 'no version', { name: 'a/b' }],
  ['McpServerManifest', false, 'no name', { version: '1.0.0' }],
  ['McpServerManifest', false, 'a websiteUrl that is not a URI', { name: 'a/b', version: '1', websiteUrl: 'example' }],
  ['McpServerManifest', false, 'remotes that are not objects', { name: 'a/b', version: '1', remotes: ['u'] }],
  ['HttpError', true, 'an empty document', {}],
  ['HttpError', true, 'all fields, jsonrpc_code and an extra member', { error: 'e', error_description: 'd', message: 'm', request_id: 'r', jsonrpc_code: -32700, x: 1 }],
  ['HttpError', false, 'a numeric request_id', { request_id: 7 }],
  ['HttpError', false, 'a non-integer jsonrpc_code', { jsonrpc_code: 'x' }],
];
for (const [name, accept, what, value] of cases) {
  const v = api.validator(api.schema(name));
  const got = v(value);
  ok(got === accept, `${name} ${accept ? 'accepts' : 'rejects'} ${what}`, accept ? v.errors : { value });
}

done();
