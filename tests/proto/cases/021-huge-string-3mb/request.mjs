// ping with a 3 MB string in params: under max-body (4 MiB in cases.sh).
export default () => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(3 * 1024 * 1024) } });
