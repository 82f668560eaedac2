/*
 * dash.js: the dashboard's page (hotloop serve). Six views over the JSON
 * API of lib/dashboard.c, drawn with the DOM and SVG, text always through
 * textContent. Live: /api/events says when the store changed and the
 * view in front is fetched again in place. A snapshot (serve --snapshot)
 * has every answer in window.HOTLOOP_SNAPSHOT and no server.
 */
(function () {
	"use strict";

	var SNAP = window.HOTLOOP_SNAPSHOT || null;
	var SVGNS = "http://www.w3.org/2000/svg";
	var main = document.getElementById("main");
	var liveEl = document.getElementById("live");
	var current = null;		/* the view shown: {page, args} */
	var drawing = 0;		/* the render under way: a newer one wins */
	var COLORS = ["#2b6cb0", "#c05621", "#2f855a", "#6b46c1", "#b83280", "#4a5568"];

	/* ---- data ---------------------------------------------------------- */

	function api(path) {
		if (SNAP) {
			if (Object.prototype.hasOwnProperty.call(SNAP, path))
				return Promise.resolve(SNAP[path]);
			return Promise.reject(new Error("not in this snapshot: " + path));
		}
		return fetch(path, { credentials: "same-origin", cache: "no-store" }).then(function (r) {
			return r.json().then(function (body) {
				if (!r.ok)
					throw new Error(body && body.error ? body.error : "HTTP " + r.status);
				return body;
			});
		});
	}

	/* the URL of a file the API draws (an SVG), in a snapshot relative to the page */
	function assetUrl(path) {
		return SNAP ? path.slice(1) : path;
	}

	function hasAsset(path) {
		return !SNAP || (SNAP["/api/assets"] || []).indexOf(path) >= 0;
	}

	/* ---- the DOM ------------------------------------------------------- */

	function h(tag, attrs) {
		var e = document.createElement(tag);
		var i, k;

		for (k in attrs || {}) {
			if (!Object.prototype.hasOwnProperty.call(attrs, k) || attrs[k] == null)
				continue;
			if (k === "text")
				e.textContent = String(attrs[k]);
			else if (k === "onclick")
				e.addEventListener("click", attrs[k]);
			else
				e.setAttribute(k, String(attrs[k]));
		}
		for (i = 2; i < arguments.length; i++)
			append(e, arguments[i]);
		return e;
	}

	function append(e, c) {
		if (c == null || c === false)
			return;
		if (Array.isArray(c))
			c.forEach(function (x) { append(e, x); });
		else if (typeof c === "string" || typeof c === "number")
			e.appendChild(document.createTextNode(String(c)));
		else
			e.appendChild(c);
	}

	function s(tag, attrs) {
		var e = document.createElementNS(SVGNS, tag);

		for (var k in attrs || {})
			if (Object.prototype.hasOwnProperty.call(attrs, k) && attrs[k] != null) {
				if (k === "text")
					e.textContent = String(attrs[k]);
				else
					e.setAttribute(k, String(attrs[k]));
			}
		return e;
	}

	/* ---- formats ------------------------------------------------------- */

	function when(t) {
		if (t == null)
			return "-";
		var d = new Date(t * 1000);

		return d.toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
	}

	function pct(v, digits) {
		if (v == null || !isFinite(v))
			return "-";
		return (v > 0 ? "+" : "") + v.toFixed(digits == null ? 1 : digits) + "%";
	}

	function num(v) {
		if (v == null || !isFinite(v))
			return "-";
		var a = Math.abs(v);

		if (a >= 100)
			return v.toFixed(0);
		if (a >= 1)
			return v.toFixed(3);
		return v.toPrecision(3);
	}

	function kib(v) {
		if (v == null || !isFinite(v))
			return "-";
		return Math.abs(v) >= 10240 ? (v / 1024).toFixed(1) + " MiB" : Math.round(v) + " KiB";
	}

	function short(c) {
		return c ? c.slice(0, 12) : "-";
	}

	function verdictBadge(v, stage) {
		return h("span", { "class": "badge v-" + (v || "none"), text: (v || "running") +
			(stage ? " at " + stage : "") });
	}

	function table(head, rows, cls) {
		return h("table", { "class": cls || "list" },
			h("thead", null, h("tr", null, head.map(function (x) { return h("th", { text: x }); }))),
			h("tbody", null, rows));
	}

	function td(x, cls) {
		return h("td", { "class": cls || null }, x);
	}

	function section(title) {
		var e = h("section", null, h("h2", { text: title }));

		for (var i = 1; i < arguments.length; i++)
			append(e, arguments[i]);
		return e;
	}

	function empty(what) {
		return h("p", { "class": "empty", text: what });
	}

	/* ---- charts -------------------------------------------------------- */

	/*
	 * A line chart: series [{name, points: [[x, y]], band: [[x, lo, hi]]}],
	 * o.xLabel(x) for ticks, o.yFmt(y), o.zero to include 0. A y that is
	 * not a number (null: not measured) is left out, not taken for 0.
	 */
	function lineChart(series, o) {
		var W = 720, H = 220, L = 64, R = 12, T = 12, B = 30;
		var xs = [], ys = [], svg = s("svg", { viewBox: "0 0 " + W + " " + H, "class": "chart",
			role: "img", "data-series": series.length });
		var x0, x1, y0, y1, i;

		series.forEach(function (se) {
			se.points.forEach(function (p) { if (Number.isFinite(p[1])) { xs.push(p[0]); ys.push(p[1]); } });
			(se.band || []).forEach(function (b) { if (Number.isFinite(b[1]) && Number.isFinite(b[2])) { ys.push(b[1]); ys.push(b[2]); } });
		});
		if (!xs.length) {
			svg.appendChild(s("text", { x: W / 2, y: H / 2, "text-anchor": "middle", "class": "none", text: "no data yet" }));
			return svg;
		}
		if (o.zero)
			ys.push(0);
		x0 = Math.min.apply(null, xs); x1 = Math.max.apply(null, xs);
		y0 = Math.min.apply(null, ys); y1 = Math.max.apply(null, ys);
		if (x1 === x0) { x0 -= 1; x1 += 1; }
		/* values none of which is below 0 (times, CPU, memory, counts) get no axis below it */
		var floor = y0 >= 0 ? 0 : -Infinity;
		if (y1 === y0) { y0 -= Math.abs(y0) * 0.1 + 1; y1 += Math.abs(y1) * 0.1 + 1; }
		var pad = (y1 - y0) * 0.06;
		y0 = Math.max(floor, y0 - pad);
		y1 += pad;
		function X(x) { return L + (x - x0) / (x1 - x0) * (W - L - R); }
		function Y(y) { return T + (y1 - y) / (y1 - y0) * (H - T - B); }
		for (i = 0; i <= 4; i++) {
			var yv = y0 + (y1 - y0) * i / 4;

			svg.appendChild(s("line", { x1: L, x2: W - R, y1: Y(yv), y2: Y(yv), "class": "grid" }));
			svg.appendChild(s("text", { x: L - 6, y: Y(yv) + 4, "text-anchor": "end", "class": "tick",
				text: o.yFmt ? o.yFmt(yv) : num(yv) }));
		}
		if (o.zero && y0 < 0 && y1 > 0)
			svg.appendChild(s("line", { x1: L, x2: W - R, y1: Y(0), y2: Y(0), "class": "zero" }));
		var ticks = {};
		xs.forEach(function (x) { ticks[x] = 1; });
		var tk = Object.keys(ticks).map(Number).sort(function (a, b) { return a - b; });
		var step = Math.max(1, Math.ceil(tk.length / 8));
		/* the last label ends at the right edge instead of running past it */
		for (i = 0; i < tk.length; i += step)
			svg.appendChild(s("text", { x: X(tk[i]), y: H - 10, "text-anchor": X(tk[i]) > W - R - 40 ? "end" : "middle",
				"class": "tick", text: o.xLabel ? o.xLabel(tk[i]) : String(tk[i]) }));
		series.forEach(function (se, k) {
			var color = se.color || COLORS[k % COLORS.length];
			var band = (se.band || []).filter(function (b) { return Number.isFinite(b[1]) && Number.isFinite(b[2]); });

			if (band.length) {
				var d = band.map(function (b, j) { return (j ? "L" : "M") + X(b[0]) + "," + Y(b[2]); }).join("") +
					band.slice().reverse().map(function (b) { return "L" + X(b[0]) + "," + Y(b[1]); }).join("") + "Z";
				svg.appendChild(s("path", { d: d, fill: color, "class": "band" }));
			}
			var pts = se.points.filter(function (p) { return Number.isFinite(p[1]); });
			if (pts.length > 1 && !se.dots)
				svg.appendChild(s("path", { d: pts.map(function (p, j) { return (j ? "L" : "M") + X(p[0]) + "," + Y(p[1]); }).join(""),
					stroke: color, "class": "series", "data-name": se.name }));
			pts.forEach(function (p) {
				var c = s("circle", { cx: X(p[0]), cy: Y(p[1]), r: se.dots ? 3 : 2.5, fill: color, "class": "dot" });

				c.appendChild(s("title", { text: se.name + ": " + (o.yFmt ? o.yFmt(p[1]) : num(p[1])) +
					(o.xLabel ? " at " + o.xLabel(p[0]) : "") }));
				svg.appendChild(c);
			});
		});
		return svg;
	}

	function legend(names) {
		return h("div", { "class": "legend" }, names.map(function (n, k) {
			return h("span", { "class": "legend-item" },
				h("span", { "class": "swatch c" + (k % COLORS.length) }), n);
		}));
	}

	/* an estimate with its interval, against zero and the expected gain */
	function intervalPlot(a) {
		var W = 720, H = 56, L = 20, R = 20;
		var vals = [0, a.change_pct, a.ci_low_pct, a.ci_high_pct, a.expected_gain_pct == null ? null : -a.expected_gain_pct]
			.filter(function (v) { return v != null && isFinite(v); });
		var lo = Math.min.apply(null, vals), hi = Math.max.apply(null, vals);
		var svg = s("svg", { viewBox: "0 0 " + W + " " + H, "class": "interval" });

		if (hi === lo) { lo -= 1; hi += 1; }
		var pad = (hi - lo) * 0.1;
		lo -= pad; hi += pad;
		function X(v) { return L + (v - lo) / (hi - lo) * (W - L - R); }
		svg.appendChild(s("line", { x1: X(0), x2: X(0), y1: 4, y2: H - 16, "class": "zero" }));
		svg.appendChild(s("text", { x: X(0), y: H - 4, "text-anchor": "middle", "class": "tick", text: "0%" }));
		if (a.expected_gain_pct != null) {
			svg.appendChild(s("line", { x1: X(-a.expected_gain_pct), x2: X(-a.expected_gain_pct), y1: 4, y2: H - 16, "class": "expected" }));
			svg.appendChild(s("text", { x: X(-a.expected_gain_pct), y: H - 4, "text-anchor": "middle", "class": "tick",
				text: "expected " + pct(-a.expected_gain_pct, 0) }));
		}
		if (a.ci_low_pct != null && a.ci_high_pct != null)
			svg.appendChild(s("rect", { x: X(a.ci_low_pct), y: 14, width: Math.max(1, X(a.ci_high_pct) - X(a.ci_low_pct)),
				height: 14, "class": "ci" }));
		if (a.change_pct != null) {
			svg.appendChild(s("circle", { cx: X(a.change_pct), cy: 21, r: 5, "class": "estimate" }));
			svg.appendChild(s("text", { x: X(a.change_pct), y: 10, "text-anchor": "middle", "class": "tick",
				text: pct(a.change_pct) + " [" + pct(a.ci_low_pct) + ", " + pct(a.ci_high_pct) + "]" }));
		}
		return svg;
	}

	/* a diff with its added and removed lines marked */
	function diffBlock(text) {
		var pre = h("pre", { "class": "diff" });

		(text || "").split("\n").forEach(function (line) {
			var cls = /^\+\+\+|^---/.test(line) ? "file" : line[0] === "+" ? "add" : line[0] === "-" ? "del" :
				line.slice(0, 2) === "@@" ? "hunk" : null;

			pre.appendChild(h("span", { "class": cls, text: line + "\n" }));
		});
		return pre;
	}

	/* ---- views --------------------------------------------------------- */

	function hotspotTable(hs) {
		return table(["#", "function", "where", "attributed", "self", "tags"], (hs || []).map(function (x, i) {
			return h("tr", null, td(String(i + 1)), td(h("code", { text: x.function })),
				td((x.file || "?") + (x.line ? ":" + x.line : "")),
				td(num(x.attributed_pct) + "%", "num"), td(num(x.self_pct) + "%", "num"),
				td((x.tags || []).map(function (t) {
					return h("span", { "class": "tag", title: t.evidence || "", text: t.tag });
				})));
		}), "list hotspots");
	}

	function viewOverview(d) {
		var counts = d.store ? d.store.counts : { loops: 0, attempts: 0 };
		var kept = (d.loops || []).reduce(function (n, l) { return n + (l.kept || 0); }, 0);
		var out = [];

		out.push(h("div", { "class": "cards" },
			card("loops", counts.loops), card("attempts", counts.attempts), card("kept", kept),
			card("kb entries", d.kb_entries), card("scenario runs", d.scenario_runs)));
		if (!d.store)
			out.push(empty("No store yet: run 'hotloop loop' in this project; this page fills as it runs."));
		out.push(section("Gain over the kept changes, per workload",
			lineChart((d.gains || []).map(function (g) {
				return { name: g.workload, points: [[0, 0]].concat(g.points.map(function (p, i) { return [i + 1, p.total_pct]; })) };
			}), { zero: true, yFmt: function (v) { return pct(v, 0); },
			      xLabel: function (x) { return x ? "keep " + x : "start"; } }),
			legend((d.gains || []).map(function (g) {
				var last = g.points[g.points.length - 1];
				return g.workload + " (" + g.metric + "): " + pct(last ? last.total_pct : null);
			}))));
		out.push(section("Loops", (d.loops || []).length ? table(["loop", "started", "status", "branch", "from", "best", "attempts", "kept", "why it ended"],
			d.loops.map(function (l) {
				return h("tr", { "class": "loop", "data-id": l.id }, td(String(l.id)), td(when(l.started_at)),
					td(h("span", { "class": "badge s-" + l.status, text: l.status })), td(l.branch),
					td(h("code", { text: short(l.base_commit) })), td(h("code", { text: short(l.best_commit) })),
					td(String(l.attempts), "num"), td(String(l.kept), "num"), td(l.stop_reason || ""));
			})) : empty("no loop yet")));
		(d.profiles || []).forEach(function (p) {
			var sum = p.summary || {};

			out.push(section("Where the time goes now: " + p.workload + " at " + short(p.commit_sha),
				h("p", { "class": "note", text: (sum.samples || 0) + " samples, round " + (sum.round || "?") + ", " + when(p.finished_at) }),
				hotspotTable(sum.hotspots),
				sum.hotspots && sum.hotspots[0] && sum.hotspots[0].snippet ?
					h("pre", { "class": "snippet", text: sum.hotspots[0].snippet.text }) : null));
		});
		out.push(section("Activity", h("ol", { id: "activity", "class": "activity" },
			(d.activity || []).map(activityItem))));
		return out;
	}

	function card(label, v) {
		return h("div", { "class": "card" }, h("div", { "class": "value", text: v == null ? "-" : String(v) }),
			h("div", { "class": "label", text: label }));
	}

	function activityItem(a) {
		return h("li", { "class": "act-" + a.level, "data-id": a.id },
			h("span", { "class": "when", text: when(a.at) }), " ", h("span", { "class": "kind", text: a.kind }), " ",
			h("span", { text: a.message }));
	}

	/* the lanes of the timeline, top to bottom: kept, then the stage that turned it down */
	var LANES = ["kept", "tournament", "canary", "compare", "fingerprint", "test", "build", "integrity", "target", "protected", "diff", "agent", "commit"];

	function lane(a) {
		if (a.kept)
			return 0;
		var i = LANES.indexOf(a.stage || "agent");

		return i < 0 ? LANES.length - 1 : i;
	}

	function viewAttempts(d) {
		var list = d.attempts || [];
		var used = {}, lanes, strip, w;

		list.forEach(function (a) { used[lane(a)] = true; });
		lanes = LANES.map(function (n, i) { return i; }).filter(function (i) { return used[i]; });
		w = Math.max(3, Math.min(14, Math.floor(1000 / Math.max(1, list.length))));
		strip = h("div", { "class": "strip", id: "strip" });
		strip.style.height = (lanes.length * 18) + "px";
		strip.style.width = (list.length * (w + 1)) + "px";
		lanes.forEach(function (l, row) {
			var label = h("span", { "class": "lane-label", text: l ? "at " + LANES[l] : "kept" });

			label.style.top = (row * 18) + "px";
			strip.appendChild(label);
		});
		list.forEach(function (a, i) {
			var t = h("a", { href: "#attempts/" + a.id, "class": "tick v-" + (a.verdict || "none"),
				"data-id": a.id, title: "#" + a.id + " round " + a.round + ": " + (a.verdict || "running") +
				(a.stage ? " at " + a.stage : "") + (a.function ? " (" + a.function + ")" : "") +
				(a.change_pct != null ? " " + pct(a.change_pct) : "") });

			t.style.left = (i * (w + 1)) + "px";
			t.style.top = (lanes.indexOf(lane(a)) * 18 + 2) + "px";
			t.style.width = w + "px";
			strip.appendChild(t);
		});
		return [
			section("Every attempt, in the order they ran (" + list.length + (d.total > list.length ? " of " + d.total : "") + ")",
				list.length ? h("div", { "class": "timeline" }, strip) : empty("no attempt yet"),
				h("div", { "class": "legend" }, ["keep", "reject", "inconclusive", "error", "no-candidate", "none"].map(function (v) {
					return h("span", { "class": "legend-item" }, h("span", { "class": "swatch v-" + v }), v === "none" ? "running" : v);
				}))),
			section("Attempts", table(["#", "loop", "round", "lens", "function", "verdict", "change", "interval", "why"],
				list.slice().reverse().map(function (a) {
					return h("tr", { "class": "attempt", "data-id": a.id, onclick: function () { location.hash = "attempts/" + a.id; } },
						td(h("a", { href: "#attempts/" + a.id, text: "#" + a.id })), td(String(a.loop_id)), td(String(a.round)),
						td(a.lens || ""), td(a.function ? h("code", { text: a.function }) : ""),
						td(verdictBadge(a.verdict, a.stage)), td(pct(a.change_pct), "num"),
						td(a.ci_low_pct != null ? "[" + pct(a.ci_low_pct) + ", " + pct(a.ci_high_pct) + "]" : "", "num"),
						td((a.reasons || [])[0] || ""));
				})))
		];
	}

	function viewAttempt(d) {
		var a = d.attempt, out = [];

		out.push(h("h1", null, "Attempt #" + a.id + " ", verdictBadge(a.verdict, a.stage)));
		out.push(h("dl", { "class": "facts" },
			fact("loop", a.loop_id), fact("round", a.round), fact("lens", a.lens), fact("function", a.function),
			fact("expected gain", a.expected_gain_pct == null ? null : a.expected_gain_pct + "%"),
			fact("commit", a.commit_sha ? short(a.commit_sha) + " (kept)" : "not kept"),
			fact("agent", a.agent_exit_status == null ? null : "exit " + a.agent_exit_status +
				(a.agent_seconds != null ? " after " + a.agent_seconds.toFixed(1) + " s" : "")),
			fact("started", when(a.started_at)), fact("finished", when(a.finished_at))));
		if (a.hypothesis)
			out.push(section("Hypothesis", h("p", { text: a.hypothesis })));
		out.push(section("Verdict", h("ul", { "class": "reasons" }, (a.reasons || []).map(function (r) { return h("li", { text: r }); })),
			a.change_pct != null ? intervalPlot(a) : null));
		(d.runs || []).forEach(function (r) {
			(r.workloads || []).forEach(function (w) {
				var base = [], cand = [];

				w.pairs.forEach(function (p) {
					if (p.base) base.push([p.pair + 1, p.base.value]);
					if (p.cand) cand.push([p.pair + 1, p.cand.value]);
				});
				out.push(section("Pairs measured: " + w.workload + " (" + (r.metric || "metric") + ", " + w.pairs.length + " pairs)",
					lineChart([{ name: "base", points: base, dots: true }, { name: "candidate", points: cand, dots: true }],
						{ xLabel: function (x) { return "pair " + x; } }),
					legend(["base", "candidate"]),
					table(["pair", "base", "candidate", "ratio", "base RSS", "candidate RSS"], w.pairs.map(function (p) {
						var b = p.base ? p.base.value : null, c = p.cand ? p.cand.value : null;
						return h("tr", { "class": "pair" }, td(String(p.pair + 1)), td(num(b), "num"), td(num(c), "num"),
							td(b && c ? (c / b).toFixed(3) : "-", "num"),
							td(kib(p.base && p.base.max_rss_kib), "num"), td(kib(p.cand && p.cand.max_rss_kib), "num"));
					}), "list compact")));
			});
		});
		out.push(section("Diff", a.diff ? diffBlock(a.diff) : empty("no diff")));
		if (d.kb && d.kb.report_md)
			out.push(section("Knowledge base: " + d.kb.slug, h("pre", { "class": "report", text: d.kb.report_md })));
		return out;
	}

	function fact(k, v) {
		return v == null || v === "" ? null : [h("dt", { text: k }), h("dd", { text: String(v) })];
	}

	function viewBenchmarks(d) {
		var out = [];

		if (!(d.workloads || []).length)
			out.push(empty("No kept change yet: the history starts with the first keep."));
		(d.workloads || []).forEach(function (w) {
			var pts = w.points, first = pts[0];
			var label = function (x) { return x ? short(pts[x - 1].commit).slice(0, 7) : "start"; };
			var vals = [[0, first ? first.base_median : NaN]].concat(pts.map(function (p, i) { return [i + 1, p.cand_median]; }));
			/* the interval of each keep's change, carried onto its value */
			var band = pts.map(function (p, i) {
				if (p.ci_low_pct == null || p.base_median == null)
					return [i + 1, NaN, NaN];
				return [i + 1, p.base_median * (1 + p.ci_low_pct / 100), p.base_median * (1 + p.ci_high_pct / 100)];
			});

			out.push(section("Workload " + w.workload + " (" + (w.metric || "metric") + ", median of the measured runs)",
				lineChart([{ name: w.workload, points: vals, band: band }], { xLabel: label }),
				h("p", { "class": "note", text: "the band: each keep's confidence interval of its change, on the value before it" }),
				h("h3", { text: "Peak RSS" }),
				lineChart([{ name: "peak RSS", points: [[0, first ? first.base_rss_kib : NaN]].concat(pts.map(function (p, i) { return [i + 1, p.cand_rss_kib]; })) }],
					{ xLabel: label, yFmt: kib }),
				table(["keep", "commit", "function", "before", "after", "change", "interval", "so far", "peak RSS"], pts.map(function (p, i) {
					return h("tr", { "class": "bench-point" }, td(String(i + 1)), td(h("a", { href: "#attempts/" + p.attempt_id, text: short(p.commit) })),
						td(p.function ? h("code", { text: p.function }) : ""), td(num(p.base_median), "num"), td(num(p.cand_median), "num"),
						td(pct(p.change_pct), "num"), td(p.ci_low_pct != null ? "[" + pct(p.ci_low_pct) + ", " + pct(p.ci_high_pct) + "]" : "", "num"),
						td(pct(p.total_pct), "num"), td(kib(p.cand_rss_kib), "num"));
				}))));
		});
		return out;
	}

	function flameFrame(path, title) {
		if (!hasAsset(path))
			return empty("not drawn in this snapshot");
		return h("iframe", { "class": "flame", src: assetUrl(path), title: title, sandbox: "allow-scripts" });
	}

	function viewProfiles(d) {
		var out = [], byW = {};

		(d.profiles || []).slice().reverse().forEach(function (p) {
			(byW[p.workload] = byW[p.workload] || []).push(p);
		});
		if (!(d.latest || []).length)
			out.push(empty("No profile yet: the loop profiles the best so far as each round starts."));
		(d.latest || []).forEach(function (p) {
			var top = h("div", { "class": "top", "data-run": p.id }, h("p", { "class": "note", text: "loading the top functions..." }));
			var flame = h("div", { "class": "flame-holder" });

			out.push(section("Latest profile: " + p.workload + " at " + short(p.commit_sha) + " (" + when(p.finished_at) + ")",
				flame, top));
			/* the flame graph once the profile is known to be readable: a missing one is said, not framed */
			api("/api/profiles/" + p.id + "/top").then(function (t) {
				flame.appendChild(flameFrame("/api/profiles/" + p.id + "/flame.svg", "flame graph of " + p.workload));
				top.textContent = "";
				top.appendChild(table(["function", "self", "total", "where"], (t.rows || []).map(function (r) {
					return h("tr", null, td(h("code", { text: r.name })), td(num(r.self_pct) + "%", "num"), td(num(r.total_pct) + "%", "num"),
						td((r.file || r.dso || "") + (r.line ? ":" + r.line : "")));
				}), "list top-table"));
			}, function (e) {
				top.textContent = "";
				flame.appendChild(empty("cannot draw this profile: " + e.message));
			});
		});
		Object.keys(byW).forEach(function (w) {
			/* the first profile of each commit: one per kept change */
			var seen = {}, kept = byW[w].filter(function (p) {
				if (seen[p.commit_sha]) return false;
				return (seen[p.commit_sha] = true);
			});
			if (kept.length < 2)
				return;
			var pick = function (sel) {
				return h("select", { "class": sel }, kept.map(function (p) {
					return h("option", { value: p.id, text: short(p.commit_sha) + " (run " + p.id + ", " + when(p.finished_at) + ")" });
				}));
			};
			var bs = pick("diff-base"), cs = pick("diff-cand"), holder = h("div", { "class": "diff-holder" });
			var draw = function () {
				holder.textContent = "";
				if (bs.value === cs.value)
					return holder.appendChild(empty("pick two different commits"));
				holder.appendChild(flameFrame("/api/flame-diff/" + bs.value + "/" + cs.value + ".svg",
					"differential flame graph of " + w));
			};
			bs.value = String(kept[0].id);
			cs.value = String(kept[kept.length - 1].id);
			bs.addEventListener("change", draw);
			cs.addEventListener("change", draw);
			draw();
			out.push(section("Differential flame graph: " + w,
				h("p", { "class": "controls" }, "from ", bs, " to ", cs,
					h("span", { "class": "note", text: " red: a bigger share than before, blue: smaller" })), holder));
		});
		return out;
	}

	function viewScenarios(d) {
		var runs = d.runs || [];

		if (!runs.length)
			return [empty("No scenario run yet: 'hotloop scenario NAME' writes them under .hotloop/scenarios/.")];
		return [section("Scenario runs", table(["scenario", "run", "outcome", "phases (CPU mean, % of a core)", "leak"], runs.map(function (r) {
			return h("tr", { "class": "scenario-run", onclick: function () { location.hash = "scenarios/" + r.scenario + "/" + r.run; } },
				td(h("a", { href: "#scenarios/" + r.scenario + "/" + r.run, text: r.scenario })), td(r.run), td(r.outcome || (r.error ? "error" : "-")),
				td((r.phases || []).map(function (p) { return p.name + " " + num(p.cpu_pct && p.cpu_pct.mean); }).join(", ")),
				td(r.leak ? r.leak.verdict : "-"));
		})))];
	}

	function viewScenario(d) {
		var tl = d.timeline || {}, pts = tl.points || [], out = [];
		var phases = (tl.phases || []).map(function (p) { return p.name + " " + num(p.start_s) + "-" + num(p.end_s) + " s"; });
		var series = function (key) { return pts.map(function (p) { return [p.t, p[key]]; }); };
		var sec = function (x) { return num(x) + " s"; };

		out.push(h("h1", { text: "Scenario " + d.scenario + ", run " + d.run }));
		out.push(h("p", { "class": "note", text: "phases: " + phases.join("; ") }));
		out.push(section("CPU (% of one core)", lineChart([{ name: "cpu", points: series("cpu_pct") }], { xLabel: sec, zero: true })));
		out.push(section("Memory", lineChart([{ name: "RSS", points: series("rss_kb") }, { name: "anon", points: series("rss_anon_kb") }],
			{ xLabel: sec, yFmt: kib }), legend(["RSS", "anon"])));
		Object.keys(tl.metrics || {}).forEach(function (m) {
			out.push(section("Metric " + m, lineChart([{ name: m, points: tl.metrics[m] }], { xLabel: sec })));
		});
		out.push(section("Phases", table(["phase", "CPU mean", "p95", "max", "RSS end", "threads"],
			((d.summary || {}).phases || []).map(function (p) {
				return h("tr", null, td(p.name), td(num(p.cpu_pct && p.cpu_pct.mean), "num"), td(num(p.cpu_pct && p.cpu_pct.p95), "num"),
					td(num(p.cpu_pct && p.cpu_pct.max), "num"), td(kib(p.rss_kb && p.rss_kb.end), "num"), td(String(p.threads), "num"));
			}))));
		return out;
	}

	var kbQuery = "";	/* what the search field holds: a redraw while a loop runs keeps it */

	function viewKb(d, args) {
		var input = h("input", { type: "search", id: "kb-search", placeholder: "search: words in the title, function, hypothesis or reasons" });
		var holder = h("div");
		var entries = d.entries || [];
		var fill = function () {
			var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
			var hits = entries.filter(function (e) {
				var text = [e.title, e.function, e.hypothesis, (e.reasons || []).join(" ")].join(" ").toLowerCase();
				return words.every(function (w) { return text.indexOf(w) >= 0; });
			});
			holder.textContent = "";
			holder.appendChild(hits.length ? table(["date", "verdict", "function", "what", "change"], hits.map(function (e) {
				return h("tr", { "class": "kb-entry", "data-slug": e.slug, onclick: function () { location.hash = "kb/" + e.slug; } },
					td((e.date || "").slice(0, 10)), td(verdictBadge(e.verdict)), td(e.function ? h("code", { text: e.function }) : ""),
					td(h("a", { href: "#kb/" + e.slug, text: e.title || e.slug })), td(e.change || ""));
			})) : empty(entries.length ? "nothing matches" : "the knowledge base is empty"));
		};
		input.value = kbQuery;
		input.addEventListener("input", function () { kbQuery = input.value; fill(); });
		fill();
		return [section("Knowledge base (" + entries.length + " entries)", input, holder)];
	}

	function viewKbEntry(e) {
		return [h("h1", null, e.title || e.slug, " ", verdictBadge(e.verdict)),
			e.report_md ? h("pre", { "class": "report", text: e.report_md }) : empty("no report.md"),
			section("Diff", e.diff ? diffBlock(e.diff) : empty("no diff"))];
	}

	/* ---- routing ------------------------------------------------------- */

	var views = {
		overview: function () { return api("/api/overview").then(viewOverview); },
		attempts: function (args) {
			if (args[0])
				return api("/api/attempts/" + encodeURIComponent(args[0])).then(viewAttempt);
			return api("/api/attempts").then(viewAttempts);
		},
		benchmarks: function () { return api("/api/benchmarks").then(viewBenchmarks); },
		profiles: function () { return api("/api/profiles").then(viewProfiles); },
		scenarios: function (args) {
			if (args[0] && args[1])
				return api("/api/scenarios/" + encodeURIComponent(args[0]) + "/" + encodeURIComponent(args[1])).then(viewScenario);
			return api("/api/scenarios").then(viewScenarios);
		},
		kb: function (args) {
			if (args[0])
				return api("/api/kb/" + encodeURIComponent(args[0])).then(viewKbEntry);
			return api("/api/kb").then(viewKb);
		}
	};

	function route() {
		var parts;

		try {
			parts = (location.hash || "#overview").slice(1).split("/").map(decodeURIComponent);
		} catch (e) {
			parts = ["overview"];	/* a malformed %-escape (URIError) */
		}
		if (!views[parts[0]])
			parts = ["overview"];
		return { page: parts[0], args: parts.slice(1) };
	}

	/* Draw the view in front; 'again': the same view with fresh data (keep the scroll, the open diffs) */
	function render(again) {
		var r = route(), mine = ++drawing, y = window.scrollY;

		if (again && current && current.page === r.page && r.page === "profiles")
			return;	/* the flame graphs stay as they are: a keep adds a profile, not a change to these */
		current = r;
		document.querySelectorAll("#nav a").forEach(function (a) {
			a.classList.toggle("here", a.getAttribute("data-page") === r.page);
		});
		views[r.page](r.args).then(function (nodes) {
			var focused = document.activeElement && document.activeElement.id, f;

			if (mine !== drawing)
				return;
			main.textContent = "";
			append(main, nodes);
			main.setAttribute("data-page", r.page);
			main.setAttribute("data-ready", String(mine));
			if (again) {
				window.scrollTo(0, y);
				/* typing goes on in the field it went to */
				if (focused && (f = document.getElementById(focused)) && main.contains(f)) {
					f.focus();
					if (f.setSelectionRange)
						f.setSelectionRange(f.value.length, f.value.length);
				}
			}
		}, function (e) {
			if (mine !== drawing)
				return;
			main.textContent = "";
			main.appendChild(h("p", { "class": "error", text: e.message }));
			main.setAttribute("data-page", r.page);
			main.setAttribute("data-ready", String(mine));
		});
	}

	window.addEventListener("hashchange", function () { render(false); });

	/* ---- live ---------------------------------------------------------- */

	/*
	 * The first draw waits for the stream to be open (or to fail, or a
	 * second): what is committed after it comes as an event, and what
	 * was committed before it is in what the draw fetches.
	 */
	var started = false;

	function start() {
		if (!started) {
			started = true;
			render(false);
		}
	}

	function live() {
		if (SNAP) {
			liveEl.textContent = "snapshot";
			liveEl.className = "live snapshot";
			start();
			return;
		}
		if (!window.EventSource) {
			liveEl.textContent = "not live";
			start();
			return;
		}
		var es = new EventSource("/api/events");
		var pending = null, lost = false;

		setTimeout(start, 1000);
		es.addEventListener("hello", function () {
			liveEl.textContent = "live";
			liveEl.className = "live on";
			/* back after a break: what changed meanwhile came as no event */
			if (lost && started)
				render(true);
			lost = false;
			start();
		});
		es.addEventListener("activity", function (ev) {
			var a = JSON.parse(ev.data), list = document.getElementById("activity");

			liveEl.textContent = "live: " + a.kind;
			if (list && !list.querySelector('[data-id="' + a.id + '"]'))
				list.insertBefore(activityItem(a), list.firstChild);
		});
		es.addEventListener("change", function () {
			/* a burst of changes draws once */
			if (!pending)
				pending = setTimeout(function () { pending = null; render(true); }, 100);
		});
		es.addEventListener("reset", function () { render(true); });
		es.onerror = function () {
			start();
			lost = true;
			liveEl.textContent = "reconnecting";
			liveEl.className = "live off";
		};
	}

	live();
})();
