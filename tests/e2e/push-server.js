// push-server.js DIR STATUS [CERT KEY]: a stand-in for a Pyroscope server,
// for the push tests. It listens on an ephemeral port of 127.0.0.1 (https
// with CERT and KEY), writes the port to DIR/port, records each request in
// DIR/N/ (method, url, headers.json, body, and the multipart "profile" part
// as profile) and answers STATUS with a two-line body (0: never answers). It stops by itself
// after 60 seconds.
'use strict';
const fs = require('fs');
const path = require('path');

const [dir, statusArg, cert, key] = process.argv.slice(2);
const status = Number(statusArg);
let n = 0;

async function record(req, body) {
	const d = path.join(dir, String(++n));
	fs.mkdirSync(d, { recursive: true });
	fs.writeFileSync(path.join(d, 'method'), req.method + '\n');
	fs.writeFileSync(path.join(d, 'url'), req.url + '\n');
	fs.writeFileSync(path.join(d, 'headers.json'), JSON.stringify(req.headers, null, 2));
	fs.writeFileSync(path.join(d, 'body'), body);
	const type = req.headers['content-type'] || '';
	if (type.startsWith('multipart/form-data')) {
		// the WHATWG multipart parser node ships with fetch
		const form = await new Response(body, { headers: { 'content-type': type } }).formData();
		const part = form.get('profile');
		if (part && typeof part !== 'string') {
			fs.writeFileSync(path.join(d, 'profile'), Buffer.from(await part.arrayBuffer()));
			fs.writeFileSync(path.join(d, 'profile.meta'),
				JSON.stringify({ filename: part.name, type: part.type }) + '\n');
		}
	}
}

function handle(req, res) {
	const chunks = [];
	req.on('data', (c) => chunks.push(c));
	req.on('end', async () => {
		try {
			await record(req, Buffer.concat(chunks));
		} catch (e) {
			fs.writeFileSync(path.join(dir, 'server-error'), String(e.stack) + '\n');
		}
		if (!status)
			return;	// status 0: never answer (for --timeout)
		res.writeHead(status, { 'content-type': 'text/plain' });
		res.end(status < 300 ? 'ok\n' : `ingest failed: status ${status} from the test server\nsecond line\n`);
	});
}

const server = cert
	? require('https').createServer({ cert: fs.readFileSync(cert), key: fs.readFileSync(key) }, handle)
	: require('http').createServer(handle);
server.listen(0, '127.0.0.1', () => {
	fs.writeFileSync(path.join(dir, 'port.tmp'), String(server.address().port) + '\n');
	fs.renameSync(path.join(dir, 'port.tmp'), path.join(dir, 'port'));
});
setTimeout(() => process.exit(0), 60000);
