// Loads the MCP conformance CLI on Node 20: its bundle imports fs.globSync (Node 22+),
// and a missing named export of a built-in module fails at link time. This registers a
// resolve hook that hands the bundle `fs` plus a globSync that throws if it is ever
// called (the server scenarios never call it).
//   node --import ./tests/lib/conformance-node20.mjs node_modules/conformance-alpha/dist/index.js ...
import { register } from 'node:module';

register(new URL('./conformance-node20-hooks.mjs', import.meta.url));
