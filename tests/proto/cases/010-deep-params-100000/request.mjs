// ping whose params nest 100000 objects.
export default () => '{"jsonrpc":"2.0","id":1,"method":"ping","params":' +
  '{"a":'.repeat(100000) + '{}' + '}'.repeat(100000) + '}';
