// webmcp.html: where the browser offers WebMCP (navigator.modelContext), register the
// signed-in visitor's tools, each calling the gateway with the visitor's token; where it
// does not, say so. Also registers one public, read-only tool that gives the gateway's
// addresses.

import { accessToken, completeSignIn, discover, grantedScope, signIn } from './oauth.js';
import { McpClient } from './mcp.js';
import { el } from './dom.js';

const $ = (id) => document.getElementById(id);
const endpoint = new URL(document.querySelector('meta[name="mcpgate-endpoint"]')?.content || '/mcp', location.href).href;
const mc = navigator.modelContext;
const offered = Boolean(mc && (typeof mc.registerTool === 'function' || typeof mc.provideContext === 'function'));

function showError(message) {
  $('error').textContent = message;
  $('error').hidden = !message;
}

function register(tools) {
  if (typeof mc.registerTool === 'function') {
    for (const t of tools) {
      try { mc.unregisterTool?.(t.name); } catch { /* not registered yet */ }
      mc.registerTool(t);
    }
  } else mc.provideContext({ tools });
}

const publicTool = {
  name: 'get_mcp_gateway_endpoint',
  description: "Returns the address of this site's remote MCP server and of its OAuth and API documents. Read-only.",
  inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  annotations: { readOnlyHint: true },
  execute: async () => ({
    content: [{
      type: 'text',
      text: JSON.stringify({
        mcp: endpoint,
        protectedResourceMetadata: new URL(`/.well-known/oauth-protected-resource${new URL(endpoint).pathname}`, endpoint).href,
        openapi: new URL('openapi.json', location.href).href,
        llmsFull: new URL('llms-full.txt', location.href).href,
      }),
    }],
  }),
};

// A gateway tool as a WebMCP tool: the call goes through the gateway; a refusal comes back
// as an isError result naming the reason, as MCP tools report failures.
function asWebMcp(client, t) {
  return {
    name: t.name,
    description: t.description || t.name,
    inputSchema: t.inputSchema || { type: 'object' },
    ...(t.annotations ? { annotations: t.annotations } : {}),
    execute: async (args) => {
      try {
        return await client.callTool(t.name, args && typeof args === 'object' ? args : {});
      } catch (e) {
        return { content: [{ type: 'text', text: e.message }], isError: true };
      }
    },
  };
}

async function main() {
  $('mcp-url').textContent = endpoint;
  if (!offered) {
    $('webmcp-status').textContent = 'This browser does not offer WebMCP (navigator.modelContext is missing), so nothing '
      + 'can be registered here. The console on the documentation home lists and calls the same tools by hand.';
    return;
  }
  register([publicTool]);
  $('webmcp-status').textContent = 'This browser offers WebMCP. Sign in to register your tools.';
  $('signin').disabled = false;
  $('signin').addEventListener('click', async () => {
    showError('');
    try {
      await signIn(await discover(endpoint), {});
    } catch (e) {
      showError(`Sign-in failed: ${e.message}`);
    }
  });
  try {
    if (!(await completeSignIn())) return;
    const client = new McpClient(endpoint, accessToken);
    await client.initialize();
    const tools = await client.listTools();
    register(tools.map((t) => asWebMcp(client, t)));
    $('who').textContent = `Signed in. Scopes granted: ${grantedScope() || '(none)'}`;
    $('webmcp-status').textContent = `Registered ${tools.length} of your tools with this browser's WebMCP, and get_mcp_gateway_endpoint.`;
    $('tools').replaceChildren(...tools.map((t) => el('li', { 'data-testid': `tool-${t.name}` },
      el('code', { text: t.name }), ' ', el('small', { text: t.description || '' }))));
  } catch (e) {
    showError(e.message);
  }
}

main();
