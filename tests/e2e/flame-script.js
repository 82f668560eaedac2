// flame-script.js: run the script embedded in a hotloop flame graph under
// node, on a small DOM built from the SVG itself, do what a user would do,
// and print what they would see. Used by t3002-flame-script.sh.
//
//   node flame-script.js FILE.svg [ACTION...]
//     click:NAME     click the first frame named NAME
//     hover:NAME     move the mouse over it
//     find:REGEX     press Ctrl-F and answer the prompt with REGEX
//     button:REGEX   click Search and answer the prompt with REGEX
//     escape         press Escape
//     unzoom         click Reset Zoom
//
// Then prints one line per frame, "name|x|width|state|fill|label" (state:
// shown, faded or hidden), and the details line, the search result, the
// Search control's text, whether Reset Zoom shows, and any alerts.
'use strict';
const fs = require('fs');

const entities = { lt: '<', gt: '>', amp: '&', quot: '"', '#39': "'" };
const decode = s => s.replace(/&(lt|gt|amp|quot|#39);/g, (m, e) => entities[e]);

class Elem {
	constructor(tag, attrs, parent) {
		this.tagName = tag;
		this.attrs = attrs;
		this.parentNode = parent;
		this.children = [];
		this.listeners = {};
	}
	getAttribute(n) { return n in this.attrs ? this.attrs[n] : null; }
	setAttribute(n, v) { this.attrs[n] = String(v); }
	get textContent() {
		return this.children.map(c => typeof c === 'string' ? c : c.textContent).join('');
	}
	set textContent(v) { this.children = [String(v)]; }
	getElementsByTagName(tag) {
		const out = [];
		const walk = e => e.children.forEach(c => {
			if (typeof c === 'string') return;
			if (c.tagName === tag) out.push(c);
			walk(c);
		});
		walk(this);
		return out;
	}
	addEventListener(type, f) { (this.listeners[type] = this.listeners[type] || []).push(f); }
	get classList() {
		const e = this, list = () => (e.attrs.class || '').split(/\s+/).filter(Boolean);
		return {
			add(c) { const l = list(); if (!l.includes(c)) l.push(c); e.attrs.class = l.join(' '); },
			remove(c) { e.attrs.class = list().filter(x => x !== c).join(' '); },
			contains(c) { return list().includes(c); },
		};
	}
}

// Enough XML for our own output: elements, attributes, text, CDATA.
function parse(xml) {
	const root = new Elem('#document', {}, null);
	let cur = root, i = 0;
	while (i < xml.length) {
		if (xml.startsWith('<?', i)) {
			i = xml.indexOf('?>', i) + 2;
		} else if (xml.startsWith('<!--', i)) {
			i = xml.indexOf('-->', i) + 3;
		} else if (xml.startsWith('<![CDATA[', i)) {
			const j = xml.indexOf(']]>', i);
			cur.children.push(xml.slice(i + 9, j));
			i = j + 3;
		} else if (xml.startsWith('</', i)) {
			const j = xml.indexOf('>', i), tag = xml.slice(i + 2, j).trim();
			if (cur.tagName !== tag)
				throw new Error('</' + tag + '> closes <' + cur.tagName + '>');
			cur = cur.parentNode;
			i = j + 1;
		} else if (xml[i] === '<') {
			const j = xml.indexOf('>', i);
			let body = xml.slice(i + 1, j);
			const empty = body.endsWith('/'), attrs = {}, re = /([\w:-]+)="([^"]*)"/g;
			if (empty) body = body.slice(0, -1);
			for (let a; (a = re.exec(body)); ) attrs[a[1]] = decode(a[2]);
			const el = new Elem(body.match(/^[\w:-]+/)[0], attrs, cur);
			cur.children.push(el);
			if (!empty) cur = el;
			i = j + 1;
		} else {
			let j = xml.indexOf('<', i);
			if (j < 0) j = xml.length;
			cur.children.push(decode(xml.slice(i, j)));
			i = j;
		}
	}
	return root;
}

const [file, ...actions] = process.argv.slice(2);
const svg = parse(fs.readFileSync(file, 'utf8')).children.find(c => c.tagName === 'svg');
const byId = id => {
	for (const stack = [svg]; stack.length; ) {
		const e = stack.pop();
		if (e.attrs.id === id) return e;
		e.children.forEach(c => { if (typeof c !== 'string') stack.push(c); });
	}
	return null;
};
const docListeners = {};
const document = {
	documentElement: svg,
	getElementById: byId,
	addEventListener(type, f) { (docListeners[type] = docListeners[type] || []).push(f); },
};
let answer = null;
const alerts = [];
const script = svg.getElementsByTagName('script')[0].textContent;
const page = new Function('document', 'prompt', 'alert',
	script + '\nreturn { init: init, nodes: nodes };')(document, () => answer, m => alerts.push(m));

function fire(target, type, props) {
	const e = Object.assign({ type, target, preventDefault() { this.prevented = true; } }, props);
	for (let el = target; el; el = el.parentNode)
		(el.listeners[type] || []).forEach(f => f(e));
	(docListeners[type] || []).forEach(f => f(e));
	return e;
}

function frame(name) {
	const n = page.nodes.find(n => n.name === name);
	if (!n) throw new Error('no frame ' + name);
	return n;
}

page.init({});
for (const a of actions) {
	const [verb, ...rest] = a.split(':'), arg = rest.join(':');
	if (verb === 'click') fire(frame(arg).r, 'click');
	else if (verb === 'hover') fire(frame(arg).r, 'mouseover');
	else if (verb === 'find') {
		answer = arg;
		if (!fire(svg, 'keydown', { key: 'f', ctrlKey: true }).prevented)
			throw new Error('Ctrl-F was not taken');
	} else if (verb === 'button') { answer = arg; fire(byId('search'), 'click'); }
	else if (verb === 'escape') fire(svg, 'keydown', { key: 'Escape' });
	else if (verb === 'unzoom') fire(byId('unzoom'), 'click');
	else throw new Error('unknown action ' + a);
}

for (const n of page.nodes) {
	const c = n.g.classList;
	const state = c.contains('hide') ? 'hidden' : c.contains('faded') ? 'faded' : 'shown';
	console.log([n.name, n.r.getAttribute('x'), n.r.getAttribute('width'), state,
		n.r.getAttribute('fill'), n.t.textContent].join('|'));
}
console.log('details: ' + byId('details').textContent);
console.log('matched: ' + byId('matched').textContent);
console.log('search: ' + byId('search').textContent);
console.log('unzoom: ' + (byId('unzoom').classList.contains('hide') ? 'hidden' : 'shown'));
alerts.forEach(m => console.log('alert: ' + m));
