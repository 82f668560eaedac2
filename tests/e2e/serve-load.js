// serve-load.js: the clients of t9920-serve-load, against `hotloop serve` on
// 127.0.0.1. Each mode prints one JSON summary on stdout and stops itself
// (every step has a deadline).
//
//   load URL DB SSE RATE SECONDS INSERTS IDS
//     SSE clients of /api/events, each waiting for its "hello"; then RATE
//     API requests a second for SECONDS, open-loop: request i is due at
//     i/RATE s and sent then, whatever the answers before it did, spread
//     over the main endpoints (IDS: attempt ids for /api/attempts/ID).
//     At most MAX_OUTSTANDING are outstanding: one due beyond that is not
//     sent and counted as "behind" (the server, or this machine, could not
//     keep up), so a slow machine measures its rate instead of piling up.
//     Meanwhile INSERTS activity rows go into DB from another process
//     (the sqlite3 CLI), and every SSE client must receive each.
//   limit URL MAX
//     MAX live clients, each must get its "hello"; then one more, which
//     must be refused (its status is in the summary); then all close.
'use strict';
const http = require('http');
const { execFile } = require('child_process');
const { performance } = require('perf_hooks');

const CONNECTIONS = 32;		/* keep-alive connections of the API requests */
const MAX_OUTSTANDING = 256;
const REQUEST_TIMEOUT_MS = 10000;
const HELLO_TIMEOUT_MS = 20000;
const DRAIN_TIMEOUT_MS = 30000;	/* for the outstanding requests after the schedule */
const DELIVERY_TIMEOUT_MS = 15000;	/* for the inserted rows to reach every client */
const DEADLINE_MS = 120000;	/* of the whole run */

const [mode, base, ...args] = process.argv.slice(2);

setTimeout(() => {
	console.log(JSON.stringify({ error: 'serve-load.js: the run took over ' + DEADLINE_MS / 1000 + ' s' }));
	process.exit(1);
}, DEADLINE_MS).unref();

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/* Wait until cond() holds or ms pass; whether it held. */
async function until(cond, ms) {
	const end = performance.now() + ms;
	while (!cond()) {
		if (performance.now() > end)
			return false;
		await sleep(20);
	}
	return true;
}

/* One client of /api/events: its status, whether it said hello, the activity it got. */
class Events {
	constructor() {
		this.status = 0;
		this.hello = false;
		this.error = null;
		this.body = '';
		this.buf = '';
		this.activity = new Map();	/* id -> { message, at } */
		this.closing = false;
	}

	open() {
		return new Promise((resolve) => {
			this.req = http.get(base + '/api/events', {
				agent: false, headers: { accept: 'text/event-stream' },
			}, (res) => {
				this.status = res.statusCode;
				res.setEncoding('utf8');
				res.on('data', (chunk) => {
					if (this.status !== 200) {
						this.body += chunk;
						return;
					}
					this.buf += chunk;
					this.parse();
					if (this.hello)
						resolve();
				});
				res.on('end', () => {
					if (this.status === 200 && !this.closing)
						this.error = this.error || 'the stream ended';
					resolve();
				});
				res.on('error', (e) => {
					if (!this.closing)
						this.error = this.error || e.code || e.message;
					resolve();
				});
			});
			this.req.on('error', (e) => {
				if (!this.closing)
					this.error = this.error || e.code || e.message;
				resolve();
			});
		});
	}

	parse() {
		let end;
		while ((end = this.buf.indexOf('\n\n')) >= 0) {
			const block = this.buf.slice(0, end);
			let event = 'message', data = '';
			this.buf = this.buf.slice(end + 2);
			for (const line of block.split('\n')) {
				if (line.startsWith('event: '))
					event = line.slice(7);
				else if (line.startsWith('data: '))
					data += line.slice(6);
			}
			if (event === 'hello') {
				this.hello = true;
			} else if (event === 'activity') {
				try {
					const a = JSON.parse(data);
					this.activity.set(a.id, { message: a.message, at: performance.now() });
				} catch (e) {
					this.error = this.error || 'an activity event that is not JSON: ' + data;
				}
			}
		}
	}

	close() {
		this.closing = true;
		if (this.req)
			this.req.destroy();
	}
}

/* n clients, opened at once; resolves when each said hello or failed (or the time is up). */
async function openClients(n) {
	const clients = Array.from({ length: n }, () => new Events());
	await Promise.race([Promise.all(clients.map((c) => c.open())), sleep(HELLO_TIMEOUT_MS)]);
	return clients;
}

function percentile(sorted, p) {
	if (!sorted.length)
		return null;
	return sorted[Math.min(sorted.length - 1, Math.floor(p / 100 * sorted.length))];
}

const round3 = (x) => x === null ? null : Math.round(x * 1000) / 1000;

/* An activity row written by another process; resolves to its id (or an error). */
function insertActivity(db, message) {
	const sql = "INSERT INTO activity (at, loop_id, level, kind, message) VALUES " +
		"((julianday('now') - 2440587.5) * 86400.0, NULL, 'info', 'load', '" + message + "'); " +
		'SELECT last_insert_rowid();';
	return new Promise((resolve) => {
		execFile('sqlite3', ['-cmd', '.timeout 10000', db, sql], { timeout: 20000 }, (err, stdout, stderr) => {
			const id = Number(String(stdout).trim());
			resolve(err || !id ? { error: (err ? err.message : 'no id') + ' ' + stderr } :
				{ id, message, at: performance.now() });
		});
	});
}

async function load() {
	const [db, sseArg, rateArg, secondsArg, insertsArg, idsArg] = args;
	const nSse = Number(sseArg), rate = Number(rateArg), seconds = Number(secondsArg);
	const nInserts = Number(insertsArg), ids = idsArg.split(',');
	const endpoints = ['/api/overview', '/api/attempts', '/api/attempts/', '/api/benchmarks',
		'/api/profiles', '/api/kb'];
	const out = { scheduled: Math.round(rate * seconds), sent: 0, completed: 0, ok: 0, errors: 0,
		error_kinds: {}, behind: 0, by_endpoint: {} };
	const latencies = [];

	/* the live clients first */
	const clients = await openClients(nSse);
	out.sse = { clients: nSse, hello: clients.filter((c) => c.hello).length,
		refused: clients.filter((c) => c.status && c.status !== 200).length };
	if (out.sse.hello !== nSse) {
		out.sse.failures = clients.filter((c) => !c.hello).slice(0, 5)
			.map((c) => ({ status: c.status, error: c.error, body: c.body }));
		clients.forEach((c) => c.close());
		console.log(JSON.stringify(out));
		return 1;
	}

	/* the rows another process writes while the load runs, spread over it */
	const inserts = [];
	const writes = [];
	for (let k = 0; k < nInserts; k++)
		writes.push(sleep((k + 0.5) * seconds * 1000 / nInserts).then(() =>
			insertActivity(db, 'load insert ' + (k + 1) + ' at ' + process.pid)).then((r) => inserts.push(r)));

	const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
	let outstanding = 0, issued = 0, lastDone = 0;
	const t0 = performance.now();

	function fail(kind) {
		out.errors++;
		out.error_kinds[kind] = (out.error_kinds[kind] || 0) + 1;
	}

	function send(i) {
		const intended = t0 + i * 1000 / rate;
		const e = endpoints[i % endpoints.length];
		const path = e.endsWith('/') ? e + ids[Math.floor(i / endpoints.length) % ids.length] : e;
		const stat = out.by_endpoint[e] || (out.by_endpoint[e] = { sent: 0, ok: 0, bytes: 0 });
		let finished = false;

		function finish(kind, bytes) {
			if (finished)
				return;
			finished = true;
			outstanding--;
			out.completed++;
			lastDone = performance.now();
			if (kind) {
				fail(kind);
				return;
			}
			out.ok++;
			stat.ok++;
			stat.bytes += bytes;
			latencies.push(lastDone - intended);
		}

		outstanding++;
		out.sent++;
		stat.sent++;
		const req = http.get(base + path, { agent }, (res) => {
			let bytes = 0, first = '';
			res.on('data', (c) => {
				if (!bytes && c.length)
					first = String.fromCharCode(c[0]);
				bytes += c.length;
			});
			res.on('end', () => {
				if (res.statusCode !== 200)
					finish('status ' + res.statusCode, bytes);
				else if (!String(res.headers['content-type']).startsWith('application/json') || first !== '{')
					finish('not a JSON object', bytes);
				else
					finish(null, bytes);
			});
			res.on('error', (err) => finish(err.code || err.message, 0));
			res.on('aborted', () => finish('aborted', 0));
		});
		req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(Object.assign(new Error('timeout'), { code: 'timeout' })));
		req.on('error', (err) => finish(err.code || err.message, 0));
	}

	/* the schedule: whatever is due is sent, each time the timer fires */
	await new Promise((resolve) => {
		function tick() {
			const due = Math.min(out.scheduled, Math.floor((performance.now() - t0) * rate / 1000) + 1);
			for (; issued < due; issued++) {
				if (outstanding >= MAX_OUTSTANDING)
					out.behind++;
				else
					send(issued);
			}
			if (issued < out.scheduled)
				setTimeout(tick, 1);
			else
				resolve();
		}
		tick();
	});
	const scheduleEnd = performance.now();
	const drained = await until(() => outstanding === 0, DRAIN_TIMEOUT_MS);
	if (!drained) {
		out.errors += outstanding;
		out.error_kinds['still outstanding after the drain'] = outstanding;
	}
	await Promise.all(writes);

	/* every client must have every row */
	const good = inserts.filter((r) => r.id);
	const delivered = () => clients.every((c) => good.every((r) => c.activity.has(r.id)));
	await until(delivered, DELIVERY_TIMEOUT_MS);
	let missing = 0, wrong = 0, worst = 0;
	for (const c of clients)
		for (const r of good) {
			const a = c.activity.get(r.id);
			if (!a)
				missing++;
			else if (a.message !== r.message)
				wrong++;
			else
				worst = Math.max(worst, a.at - r.at);
		}
	out.sse.inserts = nInserts;
	out.sse.insert_errors = inserts.filter((r) => !r.id).map((r) => r.error);
	out.sse.inserted = good.length;
	out.sse.missing = missing;
	out.sse.wrong = wrong;
	out.sse.delivery_ms_max = Math.round(worst);
	out.sse.errors = clients.filter((c) => c.error).length;
	out.sse.error_kinds = [...new Set(clients.filter((c) => c.error).map((c) => c.error))];

	const elapsed = Math.max(lastDone, scheduleEnd) - t0;
	latencies.sort((a, b) => a - b);
	out.seconds = round3(elapsed / 1000);
	out.rate = Math.round(out.ok / (elapsed / 1000));
	out.latency_ms = { p50: round3(percentile(latencies, 50)), p99: round3(percentile(latencies, 99)),
		max: round3(latencies.length ? latencies[latencies.length - 1] : null) };
	clients.forEach((c) => c.close());
	agent.destroy();
	console.log(JSON.stringify(out));
	return 0;
}

async function limit() {
	const max = Number(args[0]);
	const clients = await openClients(max);
	const out = { clients: max, hello: clients.filter((c) => c.hello).length,
		errors: clients.filter((c) => c.error).map((c) => c.error).slice(0, 5) };
	const extra = (await openClients(1))[0];

	await until(() => extra.body.endsWith('}'), 5000);
	out.extra = { status: extra.status, hello: extra.hello, body: extra.body, error: extra.error };
	extra.close();
	clients.forEach((c) => c.close());
	console.log(JSON.stringify(out));
	return 0;
}

const modes = { load, limit };
if (!modes[mode]) {
	console.error('usage: serve-load.js load URL DB SSE RATE SECONDS INSERTS IDS | limit URL MAX');
	process.exit(2);
}
modes[mode]().then((rc) => process.exit(rc), (e) => {
	console.log(JSON.stringify({ error: String(e && e.stack || e) }));
	process.exit(1);
});
