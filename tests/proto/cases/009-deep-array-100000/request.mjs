// 100000 nested arrays: a parser without a depth bound overflows its stack.
export default () => '['.repeat(100000) + ']'.repeat(100000);
