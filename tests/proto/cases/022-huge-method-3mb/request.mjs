export default () => JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'm'.repeat(3 * 1024 * 1024) });
