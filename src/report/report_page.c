/*
 * The page's fixed parts: the style sheet, the colors of the heat and
 * class levels, and the script that sorts and filters the tables.  All
 * inline, so the page needs nothing beside itself.
 */
#include "internal.h"

#include "report/report_internal.h"

/*
 * Heat levels 0 .. 9 go from white (exact) through yellow and orange to
 * dark red (above 4096 ulp); 10 is NaN (grey).  Classes follow the CLI's
 * reading: green for exact and rounding, blue for inside the envelope,
 * orange for suspicious, red shades for defects and mismatches, grey for
 * undecided.
 */
static const char style[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}"
	"h1{font-size:1.5em}h2{font-size:1.25em;border-top:2px solid #ccc;"
	"padding-top:.6em}h3{font-size:1.05em;margin:.8em 0 .3em}"
	"table{border-collapse:collapse;margin:.4em 0}"
	"td,th{border:1px solid #ddd;padding:2px 6px;text-align:right;"
	"vertical-align:top}th{background:#f4f4f4}"
	"td:first-child,th:first-child{text-align:left}"
	"table.sortable th{cursor:pointer}"
	".meta{color:#555}.note{color:#777;font-size:.9em}"
	".src{color:#666;font-family:monospace;text-align:left}"
	"td.msg{text-align:left;min-width:28em;font-size:.85em}"
	"td.tops{text-align:left;font-family:monospace;font-size:.9em}"
	".v{padding:1px 8px;border-radius:8px;font-size:.8em;color:#fff;"
	"background:#888}.v-legit{background:#2a8a3a}"
	".v-suspicious{background:#d98200}.v-defect{background:#c0262d}"
	".v-undecided{background:#777}"
	".vt-legit{color:#2a8a3a}.vt-suspicious{color:#d98200;font-weight:bold}"
	".vt-defect{color:#c0262d;font-weight:bold}.vt-undecided{color:#777}"
	".maps{display:flex;gap:1.5em;flex-wrap:wrap}"
	"figure{margin:.3em 0}figcaption{font-size:.85em;color:#555}"
	"svg.grid{border:1px solid #bbb;background:#fff}"
	"svg .ax{stroke:#ddd}svg .tl{font-size:9px;text-anchor:end}"
	"svg .tb{font-size:9px;text-anchor:middle}"
	"svg .s0{fill:#3b6fb6}svg .s1{fill:#e08a1e}"
	"svg .env{stroke:#2a8a3a;stroke-width:2;stroke-dasharray:4 2}"
	"svg.bar .bg{fill:#eee}svg.bar .fg{fill:#d62728}"
	".h0{fill:#ffffff}.h1{fill:#fff7bc}.h2{fill:#fee391}"
	".h3{fill:#fec44f}.h4{fill:#fe9929}.h5{fill:#ec7014}"
	".h6{fill:#cc4c02}.h7{fill:#993404}.h8{fill:#662506}"
	".h9{fill:#000000}.h10{fill:#9e9ea8}"
	".c0{fill:#d9f0d3;background:#d9f0d3}.c1{fill:#a6dba0;"
	"background:#a6dba0}.c2{fill:#92c5de;background:#92c5de}"
	".c3{fill:#fdb863;background:#fdb863}.c4{fill:#d7191c;"
	"background:#f4a3a4}.c5{fill:#7b3294;background:#d9b8e3}"
	".c6{fill:#b2182b;background:#f1b0b7}.c7{fill:#e7298a;"
	"background:#f6b2d4}.c8{fill:#bababa;background:#dddddd}"
	"details.hlo pre{font-size:12px;background:#fafafa;padding:.5em;"
	"overflow:auto;max-height:40em}"
	"span.op{display:inline-block;min-width:100%}"
	"input.filter{margin:.3em 0;padding:2px 6px;width:20em}"
	".legend span{display:inline-block;padding:0 6px;margin-right:2px;"
	"font-size:.8em}";

/*
 * A click on a header sorts its table's body by that column (numbers by
 * their data-v when the cells have one, else as text), a second click the
 * other way; a filter box above a table hides the rows that do not
 * contain its text.  Last it marks the body data-script="done", so a
 * test reading the DOM knows the script ran to its end.
 */
static const char script[] =
	"(function(){"
	"function key(td){var v=td.getAttribute('data-v');"
	"if(v!==null){var x=parseFloat(v);return isNaN(x)?-Infinity:x;}"
	"var t=td.textContent;var y=parseFloat(t);"
	"return isNaN(y)||String(y)!==t.trim()?t:y;}"
	"document.querySelectorAll('table.sortable').forEach(function(tb){"
	"tb.querySelectorAll('thead th').forEach(function(th,i){"
	"th.addEventListener('click',function(){"
	"var body=tb.tBodies[0];var rows=Array.prototype.slice.call(body.rows);"
	"var d=th.getAttribute('data-dir')==='1'?-1:1;"
	"th.setAttribute('data-dir',d===1?'1':'-1');"
	"rows.sort(function(a,b){var x=key(a.cells[i]),y=key(b.cells[i]);"
	"if(typeof x!==typeof y){x=String(x);y=String(y);}"
	"return x<y?-d:x>y?d:0;});"
	"rows.forEach(function(r){body.appendChild(r);});});});});"
	"document.querySelectorAll('input.filter').forEach(function(inp){"
	"var tb=document.getElementById(inp.getAttribute('data-table'));"
	"inp.addEventListener('input',function(){"
	"var q=inp.value.toLowerCase();"
	"Array.prototype.forEach.call(tb.tBodies[0].rows,function(r){"
	"r.style.display=r.textContent.toLowerCase().indexOf(q)<0?'none':'';"
	"});});});"
	"document.body.setAttribute('data-script','done');})();";

static const char *const heat_names[USC__HEAT_LEVELS] = {
	"0", "&#8804;0.5", "&#8804;1", "&#8804;2", "&#8804;4", "&#8804;16",
	"&#8804;64", "&#8804;256", "&#8804;4096", "&gt;4096", "NaN"};

void usc__report_head(usc__html *h, const char *title)
{
	usc__html_printf(h, "<!DOCTYPE html>\n<html lang=\"en\"><head>"
			    "<meta charset=\"utf-8\"><title>ulpscope report: ");
	usc__html_text(h, title);
	usc__html_printf(h, "</title><style>%s</style></head><body>\n", style);
}

void usc__report_legend(usc__html *h)
{
	usc__html_printf(h, "<p class=\"legend\">heat map, |ulp| against the "
			    "oracle (each cell the largest of its block): ");
	for (size_t i = 0; i < USC__HEAT_LEVELS; i++)
		usc__html_printf(h, "<svg width=\"10\" height=\"10\"><rect "
				    "class=\"h%zu\" width=\"10\" height=\"10\" "
				    "stroke=\"#999\"/></svg> %s ",
				 i, heat_names[i]);
	usc__html_printf(h, "<br>class map (each cell the worst class of its "
			    "block): ");
	for (size_t c = 0; c < USC_CLASS_COUNT; c++)
		usc__html_printf(h, "<span class=\"c%zu\">%s</span>", c,
				 usc_class_name((usc_class)c));
	usc__html_printf(h, "<br>histograms: <span style=\"color:#3b6fb6\">"
			    "&#9632; against the strict reference</span> "
			    "<span style=\"color:#e08a1e\">&#9632; against "
			    "the oracle</span> <span style=\"color:#2a8a3a\">"
			    "&#9474; the envelope's median half-width</span>"
			    "</p>\n");
}

void usc__report_tail(usc__html *h)
{
	usc__html_printf(h, "<script>%s</script></body></html>\n", script);
}
