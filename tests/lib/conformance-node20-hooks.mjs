// Resolve hook for conformance-node20.mjs: `fs` from the conformance bundle → fs + globSync.
const shim = 'data:text/javascript,' + encodeURIComponent(`
import fs from 'node:fs';
export * from 'node:fs';
export default fs;
export function globSync() { throw new Error('fs.globSync needs Node 22 (loaded through tests/lib/conformance-node20.mjs)'); }
`);

export async function resolve(specifier, context, next) {
	if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL &&
	    /\/(conformance|conformance-alpha)\/dist\//.test(context.parentURL))
		return { url: shim, shortCircuit: true };
	return next(specifier, context);
}
