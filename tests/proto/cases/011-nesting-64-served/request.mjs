export default () => '{"jsonrpc":"2.0","id":1,"method":"ping","params":' +
  '{"a":'.repeat(63) + '{}' + '}'.repeat(63) + '}';
