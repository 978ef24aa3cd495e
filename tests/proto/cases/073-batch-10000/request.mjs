// 10,000 pings: far over max-batch (100 in cases.sh).
export default () => JSON.stringify(Array.from({ length: 10000 }, (_, id) => ({ jsonrpc: '2.0', id, method: 'ping' })));
