/* SPDX-License-Identifier: MIT */
/*
 * svg.c - `convert --to svg`: an interactive flame graph, one SVG file
 * with its script inline (nothing fetched: it opens offline in any
 * browser).
 *
 *   +------------------------------------------------------------+
 *   | title                                  [Search] [Reset zoom]|
 *   |        [leaf ]                                             |
 *   |  [loop_leaf  ][recurse]       [sleeper                   ] |
 *   | [main                                                    ] |
 *   | [all                                                     ] |
 *   | details: the frame under the pointer: name, weight, share   |
 *   +------------------------------------------------------------+
 *
 * One <g> per frame (a node of the flame tree, flame.h) at least
 * MIN_PX wide: data-x/data-w its place in the full graph's pixels,
 * data-d its depth, data-v its weight; a <title> says name, weight and
 * percentage (also shown by viewers without scripts) and the <text> holds
 * the name cut to fit.  The script shows the frame under the pointer in
 * the details line, zooms on click (the frame fills the width, its
 * ancestors stay, the rest hides; Reset zoom or a click on the bottom
 * frame goes back) and colours the frames whose name matches a search
 * (a regular expression), with the share of the total they cover.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "flame.h"

#define WIDTH 1200
#define PAD 10
#define FRAME_H 16
#define TOP 36    /* title and buttons */
#define BOTTOM 24 /* details line */
#define FONT 12
#define CHAR_W 7.0 /* px per character of the 12 px monospace font */
#define MIN_PX 0.1

static const char script[] =
	"var svg=document.documentElement,frames=[],details,matched,zoomed=null,term=null;\n"
	"var W=" "%d" ",PAD=%d,CW=%g;\n"
	"function fit(g,w){var t=g.querySelector('text'),n=g.getAttribute('data-n');"
	"var k=Math.floor((w-6)/CW);t.textContent=k<3?'':(n.length<=k?n:n.slice(0,k-2)+'..');}\n"
	"function place(g,x,w){var r=g.querySelector('rect');r.setAttribute('x',x.toFixed(2));"
	"r.setAttribute('width',Math.max(w,0).toFixed(2));"
	"g.querySelector('text').setAttribute('x',(x+3).toFixed(2));fit(g,w);}\n"
	"function info(g){return g.querySelector('title').textContent;}\n"
	"function zoom(g){var x0=+g.getAttribute('data-x'),w0=+g.getAttribute('data-w'),"
	"d0=+g.getAttribute('data-d'),s=(W-2*PAD)/w0;zoomed=g;\n"
	" frames.forEach(function(f){var x=+f.getAttribute('data-x'),w=+f.getAttribute('data-w'),"
	"d=+f.getAttribute('data-d');\n"
	"  if(d<d0){var on=x<=x0+1e-6&&x+w>=x0+w0-1e-6;f.style.display=on?'':'none';"
	"if(on){place(f,PAD,W-2*PAD);f.classList.add('parent');}return;}\n"
	"  f.classList.remove('parent');\n"
	"  if(x<x0-1e-6||x+w>x0+w0+1e-6){f.style.display='none';return;}\n"
	"  f.style.display='';place(f,PAD+(x-x0)*s,w*s);});\n"
	" document.getElementById('unzoom').style.opacity=1;}\n"
	"function unzoom(){zoomed=null;frames.forEach(function(f){f.style.display='';"
	"f.classList.remove('parent');place(f,+f.getAttribute('data-x'),+f.getAttribute('data-w'));});"
	"document.getElementById('unzoom').style.opacity=0;}\n"
	"function search(re){var total=+frames[0].getAttribute('data-v'),sum=0,spans=[];term=re;\n"
	" frames.forEach(function(f){var r=f.querySelector('rect'),hit=re&&re.test(f.getAttribute('data-n'));\n"
	"  r.setAttribute('fill',hit?'rgb(230,0,230)':r.getAttribute('data-fill'));\n"
	"  if(hit){var x=+f.getAttribute('data-x'),w=+f.getAttribute('data-w');"
	"if(!spans.some(function(s){return x>=s[0]-1e-6&&x+w<=s[1]+1e-6;})){spans.push([x,x+w]);"
	"sum+=+f.getAttribute('data-v');}}});\n"
	" matched.textContent=re?'Matched: '+(total?(100*sum/total).toFixed(1):'0')+'%%':'';\n"
	" document.getElementById('search').textContent=re?'Reset search':'Search';}\n"
	"function ask(){if(term){search(null);return;}var s=prompt('Search (regular expression)','');"
	"if(s){try{search(new RegExp(s));}catch(e){alert(e.message);}}}\n"
	"window.addEventListener('load',function(){details=document.getElementById('details');"
	"matched=document.getElementById('matched');\n"
	" frames=Array.prototype.slice.call(document.querySelectorAll('g.f'));\n"
	" frames.forEach(function(f){f.addEventListener('mouseover',function(){details.textContent=info(f);});\n"
	"  f.addEventListener('mouseout',function(){details.textContent=' ';});\n"
	"  f.addEventListener('click',function(){if(f===frames[0])unzoom();else zoom(f);});});\n"
	" document.getElementById('unzoom').addEventListener('click',unzoom);\n"
	" document.getElementById('search').addEventListener('click',ask);\n"
	" window.addEventListener('keydown',function(e){if((e.ctrlKey||e.metaKey)&&e.key==='f'){"
	"e.preventDefault();ask();}if(e.key==='Escape'){search(null);unzoom();}});});\n"
	"window.flame={zoom:zoom,unzoom:unzoom,search:search};\n";

struct svg_state {
	const struct tk_flame *f;
	struct tk_export *x;
	double scale; /* px per unit of weight */
	uint32_t maxdepth;
	unsigned height;
	double *cursor; /* per depth: where the next child starts */
	uint32_t cap;
};

/* "1.23 ms" for ns, "N calls", "N samples". */
static void weight_text(char *buf, size_t len, const char *unit, uint64_t v)
{
	if (strcmp(unit, "ns")) {
		snprintf(buf, len, "%" PRIu64 " %s", v, unit);
		return;
	}
	if (v < 1000)
		snprintf(buf, len, "%" PRIu64 " ns", v);
	else if (v < 1000000)
		snprintf(buf, len, "%.2f us", v / 1e3);
	else if (v < 1000000000)
		snprintf(buf, len, "%.2f ms", v / 1e6);
	else
		snprintf(buf, len, "%.3f s", v / 1e9);
}

/* A warm colour from the name, the same for the same name. */
static void colour(char *buf, size_t len, const char *name)
{
	uint32_t h = 2166136261u;

	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	snprintf(buf, len, "rgb(%u,%u,%u)", 205 + (h & 0x3f) % 50,
		 80 + (h >> 8) % 150, 30 + (h >> 16) % 55);
}

static uint32_t max_depth(const struct tk_flame *f)
{
	uint32_t *depth = calloc(f->nnodes + 1, sizeof(*depth)), max = 0;

	if (!depth)
		return 64;
	for (uint32_t i = 1; i < f->nnodes; i++) {
		depth[i] = depth[f->node[i].parent] + 1;
		if (f->node[i].total && depth[i] > max)
			max = depth[i];
	}
	free(depth);
	return max;
}

static void frame(struct svg_state *s, uint32_t node, double x, uint32_t depth)
{
	const struct tk_flame *f = s->f;
	struct tk_out *o = &s->x->out;
	const struct tk_flame_node *n = &f->node[node];
	const char *name = node ? tk_flame_name(f, node) : "all";
	double w = (double)n->total * s->scale;
	double y = s->height - BOTTOM - (depth + 1.0) * FRAME_H;
	char wt[64], fill[32];
	size_t len = strlen(name), fit;
	uint64_t all = f->node[TK_FLAME_ROOT].total;

	weight_text(wt, sizeof(wt), f->unit, n->total);
	colour(fill, sizeof(fill), name);
	tk_out_printf(o, "<g class=\"f\" data-x=\"%.4f\" data-w=\"%.4f\" data-d=\"%u\" "
		      "data-v=\"%" PRIu64 "\" data-n=\"", x, w, depth, n->total);
	tk_out_xml_str(o, name, len);
	tk_out_str(o, "\"><title>");
	tk_out_xml_str(o, name, len);
	tk_out_printf(o, " (%s, %.2f%%)</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
		      "height=\"%d\" fill=\"%s\" data-fill=\"%s\" rx=\"2\"/>"
		      "<text x=\"%.2f\" y=\"%.1f\">",
		      wt, all ? 100.0 * (double)n->total / (double)all : 0.0, x, y, w,
		      FRAME_H - 1, fill, fill, x + 3, y + FRAME_H - 4.5);
	/* cut between characters, not inside one */
	fit = w > 6 ? (size_t)((w - 6) / CHAR_W) : 0;
	if (fit >= 3) {
		if (tk_utf8_cut(name, len, fit) == len) {
			tk_out_xml_str(o, name, len);
		} else {
			tk_out_xml_str(o, name, tk_utf8_cut(name, len, fit - 2));
			tk_out_str(o, "..");
		}
	}
	tk_out_str(o, "</text></g>\n");
}

/* A frame at least MIN_PX wide, depth first, children left to right:
 * each starts at its parent's cursor, which then moves past it (the
 * parent's self part is on the right). */
static int visit(void *ctx, const uint32_t *path, uint32_t depth)
{
	struct svg_state *s = ctx;
	double w = (double)s->f->node[path[depth]].total * s->scale;

	if (depth >= s->cap) {
		double *g = realloc(s->cursor, 2 * (depth + 1) * sizeof(*g));

		if (!g)
			return -ENOMEM;
		s->cursor = g;
		s->cap = 2 * (depth + 1);
	}
	if (!depth) {
		s->cursor[0] = PAD;
		frame(s, TK_FLAME_ROOT, PAD, 0);
		return 1;
	}
	if (w < MIN_PX) {
		s->cursor[depth - 1] += w;
		return 0;
	}
	frame(s, path[depth], s->cursor[depth - 1], depth);
	s->cursor[depth] = s->cursor[depth - 1];
	s->cursor[depth - 1] += w;
	return 1;
}

static int svg_end(struct tk_export *x)
{
	struct tk_flame *f = tk_flame_source_end(x);
	struct svg_state s = { .f = f, .x = x };
	int ret;
	struct tk_out *o = &x->out;
	const char *title = x->opts->title;
	char deftitle[512], wt[64];

	if (!f)
		return -EINVAL;
	s.maxdepth = max_depth(f);
	s.height = TOP + (s.maxdepth + 1) * FRAME_H + BOTTOM + PAD;
	s.scale = f->node[TK_FLAME_ROOT].total
			  ? (WIDTH - 2.0 * PAD) / (double)f->node[TK_FLAME_ROOT].total
			  : 0;
	if (!title) {
		snprintf(deftitle, sizeof(deftitle), "Flame graph of %s", x->trace->dir);
		title = deftitle;
	}
	weight_text(wt, sizeof(wt), f->unit, f->node[TK_FLAME_ROOT].total);
	tk_out_printf(o,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" "
		"width=\"%d\" height=\"%u\" viewBox=\"0 0 %d %u\">\n"
		"<style>text{font-family:monospace;font-size:%dpx;fill:#000}"
		"g.f{cursor:pointer}g.f text{pointer-events:none}"
		"g.f:hover rect{stroke:#000;stroke-width:0.5}g.parent rect{opacity:0.5}"
		"#title{font-size:16px;text-anchor:middle}"
		"#search,#unzoom{cursor:pointer;fill:#33f}#unzoom{opacity:0}"
		"</style>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n",
		WIDTH, s.height, WIDTH, s.height, FONT);
	tk_out_printf(o, "<text id=\"title\" x=\"%d\" y=\"22\">", WIDTH / 2);
	tk_out_xml_str(o, title, strlen(title));
	tk_out_printf(o, "</text>\n<text id=\"unzoom\" x=\"%d\" y=\"22\">Reset zoom</text>\n"
		      "<text id=\"search\" x=\"%d\" y=\"22\">Search</text>\n"
		      "<text id=\"info\" x=\"%d\" y=\"22\">%s%s%s</text>\n",
		      PAD, WIDTH - PAD - 100, PAD + 100, wt,
		      /* a count says what it counts: "165 calls", not "by calls" */
		      strcmp(f->unit, "ns") ? "" : " by ", strcmp(f->unit, "ns") ? "" : f->weighs);
	tk_out_printf(o, "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n"
		      "<text id=\"matched\" x=\"%d\" y=\"%u\"></text>\n",
		      PAD, s.height - PAD, WIDTH - PAD - 140, s.height - PAD);
	ret = tk_flame_walk(f, visit, &s);
	free(s.cursor);
	if (ret < 0)
		return tk_export_error(x, "out of memory");
	tk_out_str(o, "<script type=\"text/ecmascript\"><![CDATA[\n");
	tk_out_printf(o, script, WIDTH, PAD, CHAR_W);
	tk_out_str(o, "]]></script>\n</svg>\n");
	return 0;
}

const struct tk_export_ops tk_export_svg = {
	.name = "svg",
	.summary = "an interactive flame graph (SVG; opens offline in a browser)",
	.suffix = ".svg",
	.begin = tk_flame_source_begin,
	.user_event = tk_flame_source_user,
	.kernel_event = tk_flame_source_kernel,
	.kernel_any = tk_flame_source_kernel_any,
	.end = svg_end,
	.free = tk_flame_source_free,
};
