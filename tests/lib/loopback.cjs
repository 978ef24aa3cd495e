// tests/lib/loopback.cjs — node --require this: a server that listens on a port
// without naming an address (server-everything's app.listen(PORT)) listens on
// 127.0.0.1 only, not on every interface. deploy/demo runs its upstream so.
'use strict';
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
	const port = args[0];
	if ((typeof port === 'number' || (typeof port === 'string' && /^\d+$/.test(port))) &&
	    typeof args[1] !== 'string')
		args.splice(1, 0, '127.0.0.1');
	else if (port && typeof port === 'object' && !port.path && port.host === undefined)
		args[0] = { ...port, host: '127.0.0.1' };
	return listen.apply(this, args);
};
