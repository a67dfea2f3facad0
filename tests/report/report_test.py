#!/usr/bin/env python3
"""End-to-end tests of `ulpscope report` (docs/report.md).

usage: report_test.py ULPSCOPE TEST [ARGS...]
  examples OUTDIR      check a few examples (attributed, a defect with its
                       signatures, bf16) into one result file, report it, and
                       compare every figure of the page with what h5py reads
  batch OUTDIR ROOT    batch ROOT, report the index, compare the verdict
                       counts, the ranking and the case rows with /batch
  index OUTDIR INDEX   the same on an index made beforehand
  shard OUT ROOT K/N   (a fixture) batch shard K/N of ROOT into OUT
  merge OUT SHARD...   (a fixture) merge shards into the index OUT
  bad OUTDIR           a file that is not a result file, a damaged one, an
                       unwritable or impossible -o, usage errors: exit 1 or 2
                       with a message naming the file, and no page left

The page is parsed with Python's html.parser into a tree; the expected
figures come from h5py and numpy reading the same result file (binning,
down-sampling and ordering redone here from docs/report.md), never from
the report.  Exit 77: numpy or h5py missing.
"""
import html.parser
import math
import os
import shutil
import subprocess
import sys

try:
    import h5py
    import numpy as np
except ImportError as e:  # tools/setup.sh installs python3-h5py
    print(f"skipped: {e}")
    sys.exit(77)

ULPSCOPE = sys.argv[1]
SRC = os.environ.get("USC_SOURCE_DIR",
                     os.path.join(os.path.dirname(__file__), "..", ".."))
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def expect(cond, msg):
    if not cond:
        fail(msg)


def run(*args, ok=(0,)):
    p = subprocess.run([ULPSCOPE, *args], capture_output=True, text=True)
    if p.returncode not in ok:
        raise SystemExit(f"ulpscope {' '.join(args)}: exit {p.returncode}\n"
                         f"{p.stdout}{p.stderr}")
    return p


# ---------------------------------------------------------------- the DOM

VOID = {"meta", "br", "input", "hr", "img", "link"}


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent = tag, dict(attrs), parent
        self.children = []  # Nodes and strings

    def text(self):
        return "".join(c if isinstance(c, str) else c.text()
                       for c in self.children)

    def walk(self):
        yield self
        for c in self.children:
            if isinstance(c, Node):
                yield from c.walk()

    def find_all(self, tag=None, **attrs):
        for n in self.walk():
            if (tag is None or n.tag == tag) and all(
                    n.attrs.get(k.replace("_", "-")) == v
                    for k, v in attrs.items()):
                yield n

    def find(self, tag=None, **attrs):
        return next(self.find_all(tag, **attrs), None)

    def cls(self):
        return (self.attrs.get("class") or "").split()


class Parser(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {}, None)
        self.cur = self.root
        self.errors = []

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.cur.children.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        self.cur.children.append(Node(tag, attrs, self.cur))

    def handle_endtag(self, tag):
        n = self.cur
        while n is not self.root and n.tag != tag:
            n = n.parent
        if n is self.root:
            self.errors.append(f"stray </{tag}>")
            return
        if n is not self.cur:
            self.errors.append(f"</{tag}> closes unclosed <{self.cur.tag}>")
        self.cur = n.parent

    def handle_data(self, data):
        self.cur.children.append(data)


def parse(path):
    p = Parser()
    with open(path, encoding="utf-8") as f:
        p.feed(f.read())
    p.close()
    expect(not p.errors, f"{path}: markup errors {p.errors[:5]}")
    expect(p.cur is p.root, f"{path}: <{p.cur.tag}> left open")
    return p.root


def cell(row, key):
    n = row.find(data_k=key)
    return None if n is None else n.attrs.get("data-v")


def columns(table):
    """The keys of a table's columns, from its header cells' data-k."""
    ths = list(table.find("thead").find_all("th"))
    return {th.attrs.get("data-k"): i for i, th in enumerate(ths)}


def col(row, cols, key):
    """A row's figure in column key: its data-v, else its text."""
    tds = [c for c in row.children if isinstance(c, Node) and c.tag == "td"]
    td = tds[cols[key]]
    return td.attrs.get("data-v", td.text())


def same(a_text, b):
    """A data-v figure against a number read by h5py, bit for bit."""
    a = float(a_text)
    b = float(b)
    if math.isnan(b):
        return math.isnan(a)
    return a == b


# ------------------------------------------------ the report's rules, redone

HIST_LO, HIST_HI = -8, 24
HIST_BINS = 2 + (HIST_HI - HIST_LO) + 1
HEAT_EDGES = [0.5, 1, 2, 4, 16, 64, 256, 4096]
# docs/report.md, "Maps": a cell shows the worst class of its block.
SEVERITY = {0: 0, 1: 1, 2: 2, 8: 3, 3: 4, 7: 5, 6: 6, 5: 7, 4: 8}


def hist(e):
    bins = np.zeros(HIST_BINS, dtype=np.int64)
    a = np.abs(e[~np.isnan(e)])
    bins[0] = np.count_nonzero(a == 0)
    bins[1] = np.count_nonzero((a > 0) & (a < 2.0 ** HIST_LO))
    top = a >= 2.0 ** HIST_HI
    bins[-1] = np.count_nonzero(top)
    mid = a[(a >= 2.0 ** HIST_LO) & ~top]
    _, ex = np.frexp(mid)
    for b in (2 + (ex - 1) - HIST_LO):
        bins[b] += 1
    return bins, int(np.count_nonzero(np.isnan(e)))


def heat_level(x):
    if math.isnan(x):
        return 10
    if x == 0:
        return 0
    for i, edge in enumerate(HEAT_EDGES):
        if x <= edge:
            return i + 1
    return len(HEAT_EDGES) + 1


def view2d(shape):
    cols = shape[-1] if shape else 1
    rows = int(np.prod(shape[:-1])) if len(shape) > 1 else 1
    return rows, cols


def grids(err, cls, shape, grid=64):
    rows, cols = view2d(shape)
    br, bc = -(-rows // grid), -(-cols // grid)
    gr, gc = -(-rows // br), -(-cols // bc)
    a = np.abs(err.reshape(rows, cols))
    heat = np.zeros((gr, gc), dtype=int)
    klass = np.zeros((gr, gc), dtype=int) if cls is not None else None
    c2 = cls.reshape(rows, cols) if cls is not None else None
    for i in range(gr):
        for j in range(gc):
            blk = a[i * br:(i + 1) * br, j * bc:(j + 1) * bc]
            fin = blk[~np.isnan(blk)]
            heat[i, j] = heat_level(float(fin.max())) if fin.size else 10
            if c2 is not None:
                cb = c2[i * br:(i + 1) * br, j * bc:(j + 1) * bc].ravel()
                klass[i, j] = max(cb, key=lambda c: SEVERITY[int(c)])
    return (br, bc), heat, klass


def decode_grid(svg):
    """The cells the paths of a map cover, by level."""
    rows, cols = int(svg.attrs["data-rows"]), int(svg.attrs["data-cols"])
    g = np.full((rows, cols), -1)
    for p in svg.find_all("path"):
        lv = int(p.attrs["data-level"])
        for run in p.attrs["d"].split("M")[1:]:
            xy, rest = run.split("h", 1)
            x, y = map(int, xy.split())
            w = int(rest.split("v")[0])
            if (g[y, x:x + w] != -1).any():
                fail(f"map cell ({y},{x}) drawn twice")
            g[y, x:x + w] = lv
    return g


# ------------------------------------------------------------ examples

def check_output(sec, kname, i, og, attr_names):
    out = sec.find("div", data_output=str(i))
    if out is None:
        return fail(f"{kname}: output {i} has no part")
    for key in ("max_abs_ulp_oracle", "median_abs_ulp_oracle",
                "p99_abs_ulp_oracle", "max_abs_ulp_reference",
                "median_abs_ulp_reference", "p99_abs_ulp_reference",
                "nan_count_ulp_oracle", "nan_count_ulp_reference",
                "bit_exact_count", "undecided_count", "count"):
        v = cell(out, key)
        expect(v is not None and same(v, og.attrs[key]),
               f"{kname}/{i}: {key} {v} != {og.attrs[key]}")
    cls = og["class"][()].astype(np.uint8).ravel() if "class" in og else None
    if cls is not None:
        for c, name in enumerate(["exact", "rounding", "envelope",
                                  "suspicious", "defect", "nan-mismatch",
                                  "inf-mismatch", "sign-mismatch",
                                  "undecided"]):
            key = f"class_count_{name}"
            expect(int(cell(out, key)) == int(og.attrs[key]) ==
                   int(np.count_nonzero(cls == c)),
                   f"{kname}/{i}: {key}")
    # The histograms.
    for series, ds in (("reference", "ulp_error_reference"),
                       ("oracle", "ulp_error_oracle")):
        want, nans = hist(og[ds][()].ravel())
        got = np.zeros(HIST_BINS, dtype=np.int64)
        for r in out.find_all("rect", data_series=series):
            got[int(r.attrs["data-bin"])] = int(r.attrs["data-n"])
        expect((got == want).all(),
               f"{kname}/{i}: {series} histogram {got} != {want}")
        expect(f"{series} {nans}" in out.find("svg").text(),
               f"{kname}/{i}: {series} NaN count {nans} not shown")
    # The envelope's median half-width in ulps at the oracle's midpoint
    # (docs/report.md), for the formats whose ulp is written out here:
    # 2^(max(floor(log2 |x|), emin) - (p - 1)).
    fmt = {"f32": (24, -126), "bf16": (8, -126), "f16": (11, -14),
           "f64": (53, -1022)}.get(og.attrs["dtype"].decode())
    if "envelope_lo" in og and fmt and og["device"].size <= 65536:
        lo = og["envelope_lo"][()].ravel()
        hi = og["envelope_hi"][()].ravel()
        mid = og["oracle_mid"][()].ravel()
        ok = np.isfinite(lo) & np.isfinite(hi) & np.isfinite(mid)
        p, emin = fmt
        with np.errstate(divide="ignore"):
            _, ex = np.frexp(mid[ok])
        e = np.maximum(np.where(mid[ok] == 0, emin, ex - 1), emin)
        hw = np.sort((hi[ok] - lo[ok]) / 2 / np.ldexp(1.0, e - (p - 1)))
        line = out.find("line", **{"class": "env"})
        if hw.size and hw[(hw.size + 1) // 2 - 1] > 0:
            expect(line is not None and same(line.attrs["data-halfwidth"],
                                             hw[(hw.size + 1) // 2 - 1]),
                   f"{kname}/{i}: envelope half-width")
        else:
            expect(line is None, f"{kname}/{i}: envelope line without width")
    # The maps.
    shape = og["device"].shape
    err = og["ulp_error_oracle"][()].ravel()
    (br, bc), heat, klass = grids(err, cls, shape)
    hs = out.find("svg", data_kind="heat")
    expect(hs is not None and hs.attrs["data-block"] == f"{br} {bc}",
           f"{kname}/{i}: heat map blocks")
    if hs is not None:
        expect((decode_grid(hs) == heat).all(), f"{kname}/{i}: heat map")
    cs = out.find("svg", data_kind="class")
    expect((cs is None) == (cls is None), f"{kname}/{i}: class map presence")
    if cs is not None:
        expect((decode_grid(cs) == klass).all(), f"{kname}/{i}: class map")
    # The worst elements: the figures of the flat index they name, the
    # first one a worst one, and as many as asked for.
    rows = list(out.find("table", **{"class": "worst sortable"})
                .find("tbody").find_all("tr"))
    expect(len(rows) == min(10, err.size), f"{kname}/{i}: worst rows")
    sev = (np.vectorize(lambda c: SEVERITY[int(c)])(cls) if cls is not None
           else np.zeros(err.size))
    a = np.where(np.isnan(err), np.inf, np.abs(err))
    keys = list(zip(sev, a))
    expect(rows and (keys[int(rows[0].attrs["data-flat"])] == max(keys)),
           f"{kname}/{i}: the first worst element is not a worst one")
    for r in rows:
        k = int(r.attrs["data-flat"])
        for key, ds in (("oracle_mid", "oracle_mid"),
                        ("ulp_error_oracle", "ulp_error_oracle"),
                        ("ulp_error_reference", "ulp_error_reference")):
            expect(same(cell(r, key), og[ds][()].ravel()[k]),
                   f"{kname}/{i}: worst element {k} {key}")
        if cls is not None:
            expect(int(cell(r, "class")) == cls[k],
                   f"{kname}/{i}: worst element {k} class")
        if "top_ops" in og:
            first = og["top_ops"][()].reshape(err.size, -1)[k][0]
            if first != 0xFFFFFFFF:
                expect(attr_names[first] in r.text(),
                       f"{kname}/{i}: worst element {k} top op")


def check_kernel(page, path, name, kg):
    sec = page.find("section", data_kernel=name)
    if sec is None:
        return fail(f"{name}: no section")
    verdict = kg.attrs["verdict"].decode()
    expect(verdict in sec.find("h2").text(), f"{name}: verdict")
    attr_names = []
    if "attribution" in kg:
        ops = kg["attribution/ops"][()]
        share = kg["attribution/share"][()]
        attr_names = [o.decode() for o in ops["name"]]
        table = sec.find("table", **{"class": "budget sortable"})
        for op, s in zip(attr_names, share):
            row = table.find("tr", data_op=op)
            expect(row is not None and same(cell(row, "share"), s),
                   f"{name}: budget share of {op}")
        row = table.find("tr", data_op="(residual)")
        expect(same(cell(row, "share"),
                    kg["attribution"].attrs["residual_share"]),
               f"{name}: residual share")
        # Shaded HLO lines: the op's share.
        for span in sec.find("pre").find_all("span", **{"class": "op"}):
            line = span.text().strip()
            op = line.split("=")[0].replace("ROOT", "").strip().lstrip("%")
            hits = [s for n, s in zip(attr_names, share)
                    if op in n.split("+")]
            expect(hits and same(span.attrs["data-share"], hits[0]),
                   f"{name}: HLO shading of {op}")
    # The HLO listing, unescaped, is the stored text.
    hlo = kg["hlo_text"][()].decode()
    expect(sec.find("pre").text() == hlo + ("\n" if not hlo.endswith("\n")
                                           else ""),
           f"{name}: HLO listing differs from hlo_text")
    for i in range(int(kg.attrs["output_count"])):
        check_output(sec, name, i, kg[f"outputs/{i}"], attr_names)
    if "signatures" in kg:
        sg = kg["signatures"]
        t = sec.find("table", **{"class": "signatures sortable"})
        rows = list(t.find("tbody").find_all("tr"))
        expect(len(rows) == min(20, len(sg["op"])), f"{name}: signature rows")
        for k, r in enumerate(rows):
            tds = [c for c in r.children if isinstance(c, Node)]
            expect(tds[1].text() == sg["op"][k].decode() and
                   tds[2].text() == sg["mutation"][k].decode() and
                   tds[3].text() == sg["detail"][k].decode(),
                   f"{name}: signature row {k} text")
            expect(int(cell(r, "reproduced")) == sg["reproduced"][k] and
                   same(cell(r, "median_ulps"), sg["median_ulps"][k]),
                   f"{name}: signature row {k} figures")
        expect(sec.find(data_k="culprit_op").text() ==
               kg.attrs["culprit_op"].decode(), f"{name}: culprit op")
    # The summary row.
    row = page.find("table", id="kernels").find("tr", data_kernel=name)
    expect(row is not None and cell(row, "verdict") == verdict,
           f"{name}: summary verdict")
    expect(int(cell(row, "elements")) == int(kg.attrs["element_count"]),
           f"{name}: summary elements")
    outs = [kg[f"outputs/{i}"] for i in range(int(kg.attrs["output_count"]))]
    for key in ("max_abs_ulp_oracle", "max_abs_ulp_reference"):
        vals = [float(o.attrs[key]) for o in outs
                if not math.isnan(float(o.attrs[key]))]
        expect(same(cell(row, key), max(vals) if vals else float("nan")),
               f"{name}: summary {key}")
    if "class" in outs[0]:
        n = sum(int(o.attrs["class_count_defect"]) for o in outs)
        expect(int(cell(row, "class_count_defect")) == n,
               f"{name}: summary defect count")


def test_examples(outdir):
    ex = os.path.join(SRC, "data", "examples")
    weird = os.path.join(outdir, "case <b>&\"x'")
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir)
    # A case directory whose path needs escaping: hlo_file shows it.
    shutil.copytree(os.path.join(ex, "layer_norm_bf16", "normal_s0"), weird)
    res = os.path.join(outdir, "R.h5")
    run("check", os.path.join(ex, "softmax_f32", "normal_s0"), "--attribute",
        "--out", res)
    defect = os.path.join(SRC, "data", "defects", "dense_f32",
                          "dot-transpose-lhs")
    run("check", defect, "--attribute", "--out", res, "--append", ok=(0, 4))
    run("signature", defect, "--out", res, ok=(0, 4))
    run("check", weird, "--out", res, "--append", ok=(0, 4))
    page_path = os.path.join(outdir, "report.html")
    p = run("report", res, "-o", page_path)
    expect(page_path in p.stdout, "report does not say where it wrote")
    page = parse(page_path)
    with h5py.File(res, "r") as f:
        names = list(f["kernels"])
        expect(cell(page, "kernel_count") == str(len(names)), "kernel count")
        for name in names:
            check_kernel(page, res, name, f["kernels"][name])
        verdicts = [f["kernels"][n].attrs["verdict"].decode() for n in names]
        vt = page.find("table", id="verdicts")
        for v in ("legit", "suspicious", "defect", "undecided"):
            expect(int(cell(vt, f"verdict_{v}")) == verdicts.count(v),
                   f"verdict count {v}")
        expect("defect" in verdicts, "the defect case is not a defect")
    expect(weird in page.text(), "the escaped case path is not shown as is")
    raw = open(page_path, encoding="utf-8").read()
    expect("case <b>" not in raw, "a path went into the page unescaped")
    expect("http://" not in raw and "https://" not in raw and
           " src=" not in raw, "the page refers to something outside it")


# --------------------------------------------------------------- batch

def test_batch(outdir, root, idx=None):
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir)
    if idx is None:
        idx = os.path.join(outdir, "B.h5")
        run("batch", root, "--out", idx, "--quiet", ok=BATCH_OK)
    page_path = os.path.join(outdir, "report.html")
    run("report", idx, "-o", page_path)
    page = parse(page_path)
    with h5py.File(idx, "r") as f:
        b = f["batch"][()]
        status = [s.decode() for s in b["status"]]
        verdict = [v.decode() for v in b["verdict"]]
        vt = page.find("table", id="verdicts")
        for v in ("legit", "suspicious", "defect", "undecided"):
            n = sum(1 for s, x in zip(status, verdict) if s == "ok" and x == v)
            expect(int(cell(vt, f"verdict_{v}")) == n, f"verdicts {v}")
        expect(int(cell(vt, "failed")) ==
               sum(1 for s in status if s != "ok"), "failed count")
        table = page.find("table", id="cases-table")
        cols = columns(table)
        rows = {int(r.attrs["data-index"]): r for r in
                table.find("tbody").find_all("tr")}
        expect(len(rows) == len(b), f"{len(rows)} case rows, {len(b)} cases")
        for rec in b:
            r = rows.get(int(rec["index"]))
            if r is None:
                fail(f"case {rec['index']} has no row")
                continue
            expect(col(r, cols, "verdict") == rec["verdict"].decode() and
                   col(r, cols, "status") == rec["status"].decode() and
                   int(col(r, cols, "elements")) == rec["elements"] and
                   same(col(r, cols, "max_ulp_oracle"),
                        rec["max_ulp_oracle"]) and
                   same(col(r, cols, "max_ulp_reference"),
                        rec["max_ulp_reference"]),
                   f"case {rec['index']}: figures")
            for c in ("exact", "rounding", "envelope", "suspicious",
                      "defect", "undecided"):
                v = col(r, cols, f"class_count_{c}")
                expect(int(v or 0) == rec[f"n_{c}"],
                       f"case {rec['index']}: n_{c}")
            expect(col(r, cols, "message") == rec["message"].decode(),
                   f"case {rec['index']}: message")
        # The ranking: one row per HLO text, with its run count.
        hashes = [h.decode() for h in b["hlo_hash"]]
        rk = page.find("table", id="ranking-table").find("tbody")
        for h in set(hashes):
            r = rk.find("tr", data_hash=h)
            expect(r is not None and int(cell(r, "runs")) == hashes.count(h),
                   f"ranking row of {h}")
        # Sections for the worst checked cases, up to 50, each of a kernel
        # the index links.
        secs = list(page.find_all("section"))
        linked = [l.decode() for s, l in zip(status, b["link"])
                  if s == "ok" and l]
        expect(len(secs) == min(50, len(linked)), "detail sections")
        for s in secs[:3]:
            name = section_link(page, b, s)
            check_kernel_brief(s, f["kernels"][name], name)
        first = secs[0]
        gone = b[b["index"] == int(
            page.find("table", id="cases-table").find(
                "a", href="#" + first.attrs["id"]).parent.parent
            .attrs["data-index"])][0]["result"].decode()
    if root is None:
        return
    # A case's result file gone: its section says so, the page is whole.
    os.remove(os.path.join(os.path.dirname(idx), gone))
    run("report", idx, "-o", page_path)
    page = parse(page_path)
    sec = page.find("section", id=first.attrs["id"])
    expect(sec is not None and "unreadable" in sec.cls() and
           os.path.basename(gone) in sec.text(),
           "a missing case file does not show in its section")
    expect(len(list(page.find_all("section"))) == len(secs),
           "a missing case file cost more than its section")


# Exit statuses of a batch that ran (docs/batch.md): every case checked, or
# some suspicious, defect, undecided or failed.
BATCH_OK = (0, 3, 4, 5, 6)


def section_link(page, batch, sec):
    """The /kernels link of a batch index's detail section: the case row
    whose path links to the section's anchor names it."""
    a = page.find("table", id="cases-table").find(
        "a", href="#" + sec.attrs["id"])
    row = a.parent.parent
    rec = batch[batch["index"] == int(row.attrs["data-index"])][0]
    expect(rec["kernel"].decode() == sec.attrs["data-kernel"],
           f"section {sec.attrs['id']}: kernel of another case")
    return rec["link"].decode()


def check_kernel_brief(sec, kg, name):
    og = kg["outputs/0"]
    out = sec.find("div", data_output="0")
    expect(same(cell(out, "max_abs_ulp_oracle"),
                og.attrs["max_abs_ulp_oracle"]), f"{name}: linked figures")


# ----------------------------------------------------------------- bad

def test_bad(outdir):
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir)
    ex = os.path.join(SRC, "data", "examples", "softmax_f32", "normal_s0")
    good = os.path.join(outdir, "R.h5")
    run("check", ex, "--out", good)
    text = os.path.join(outdir, "notes.txt")
    with open(text, "w") as f:
        f.write("not a result file\n")
    damaged = os.path.join(outdir, "damaged.h5")
    data = bytearray(open(good, "rb").read())
    open(damaged, "wb").write(data[:len(data) // 2])
    page = os.path.join(outdir, "p.html")
    cases = [
        ([text, "-o", page], 1, text),
        ([damaged, "-o", page], 1, damaged),
        ([os.path.join(outdir, "missing.h5"), "-o", page], 1, "missing.h5"),
        ([good, "-o", os.path.join(outdir, "no", "dir", "p.html")], 1,
         "no/dir/p.html"),
        ([good, "-o", outdir], 1, "is a directory"),
        ([good, "-o", good], 1, "result file being read"),
        ([good], 2, "usage"),
        ([good, "-o", page, "--grid", "0"], 2, "--grid"),
        ([good, "-o", page, "--bogus"], 2, "--bogus"),
    ]
    for args, rc, words in cases:
        p = subprocess.run([ULPSCOPE, "report", *args], capture_output=True,
                           text=True)
        expect(p.returncode == rc,
               f"report {args}: exit {p.returncode}, expected {rc}")
        expect(words in p.stderr, f"report {args}: '{words}' not in "
               f"{p.stderr!r}")
        expect(not any(w in p.stderr for w in ("H5F", "H5D", "#000", "hid_t",
                                               "Traceback")),
               f"report {args}: library internals in {p.stderr!r}")
        expect(not os.path.exists(page), f"report {args}: left {page}")
        leftovers = [n for n in os.listdir(outdir) if ".tmp." in n]
        expect(not leftovers, f"report {args}: left {leftovers}")
    # An unwritable directory (not as root, who writes anywhere).
    if os.geteuid() != 0:
        ro = os.path.join(outdir, "ro")
        os.makedirs(ro)
        os.chmod(ro, 0o500)
        p = subprocess.run([ULPSCOPE, "report", good, "-o",
                            os.path.join(ro, "p.html")],
                           capture_output=True, text=True)
        expect(p.returncode == 1 and "Permission denied" in p.stderr,
               f"read-only directory: {p.stderr!r}")


# ------------------------------------------------------------------ audits

AUDIT_PAIRS = os.path.join(os.environ.get("USC_SOURCE_DIR", os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..")),
    "tests", "audit", "pairs")


def make_audits(res):
    """A result file with a kernel and three audits (one under a profile,
    one of a changed function, one with --ops), a pipeline of audits, and a
    group of a layout
    the report does not know (as a later kind of audit may add), written
    with h5py."""
    pairs = [("narrowacc", ["--draw", "uniform,normal", "--samples", "2",
                            "--profile", "xla-cpu"]),
             ("mulzero", ["--draw", "specials"]),
             ("roundtrip", ["--draw", "normal", "--ops", "--profile",
                            "xla-cpu"])]
    run("check", os.path.join(os.path.dirname(AUDIT_PAIRS), "..", "..",
                              "data", "examples", "adam_f32", "normal_s0"),
        "--out", res, "--force", ok=(0, 3, 4, 5))
    for name, args in pairs:
        run("audit", os.path.join(AUDIT_PAIRS, f"{name}_before.hlo"),
            os.path.join(AUDIT_PAIRS, f"{name}_after.hlo"), *args, "--out",
            res, "--append")
    # A pipeline's group (docs/audit.md, "The result file"): its stage
    # table, the per-pass plot and its descent, a single audit's group.
    run("audit", "--pipeline", os.path.join(os.path.dirname(AUDIT_PAIRS),
                                            "..", "..", "data", "pipelines",
                                            "softmax_f32"),
        "--draw", "normal", "--samples", "1", "--out", res, "--append",
        "--name", "softmax_pipe")
    with h5py.File(res, "a") as f:
        g = f.create_group("audits/some_pipeline/stages/0")
        g.attrs["pass"] = "algsimp"


def text_of(x):
    """A string attribute as h5py gives it (bytes for fixed-length)."""
    return x.decode() if isinstance(x, bytes) else str(x)


def check_audits(page, f):
    """Every audit of the file has its section with the figures h5py reads
    (the group's attributes, each output's pooled figures, the histograms
    of |ulp_before| and |ulp_after| over every sample); a group of another
    layout has its line saying it was skipped."""
    expect(page.find("h2", id="audits") is not None, "no audits heading")
    for name, g in f["audits"].items():
        if "pipeline" in g.attrs:
            check_pipeline(page, name, g)
            continue
        check_audit(page, name, g)


def check_pipeline(page, name, g):
    """A pipeline's section: its attributes, the stage table and the
    per-pass plot's points against what h5py reads from the group and its
    stages table, and the descent as a single audit's section."""
    sec = page.find("section", data_pipeline=name)
    if sec is None:
        fail(f"pipeline {name}: no section")
        return
    a = g.attrs
    expect(cell(sec, "module") == text_of(a["module"]), f"{name}: module")
    expect(int(cell(sec, "stage_count")) == a["stage_count"],
           f"{name}: stage_count")
    expect(same(cell(sec, "threshold"), a["threshold"]), f"{name}: threshold")
    expect(int(cell(sec, "gate")) == a["gate"], f"{name}: gate")
    if a["gate"]:
        expect(int(cell(sec, "gate_stage")) == a["gate_stage"],
               f"{name}: gate_stage")
    expect(cell(sec, "biggest") == text_of(a["biggest"]), f"{name}: biggest")
    stages = g["stages"][()]
    expect(len(stages) == a["stage_count"] and len(stages) > 1,
           f"{name}: {len(stages)} rows in the stages table")
    table = sec.find("table", **{"class": "stages"})
    rows = [] if table is None else [
        r for r in table.find_all("tr") if "data-stage" in r.attrs]
    expect(len(rows) == len(stages), f"{name}: {len(rows)} table rows")
    points = {}
    for c in sec.find_all("circle"):
        points[(int(c.attrs["data-stage"]), c.attrs["data-series"])] = \
            c.attrs["data-v"]
    evaluated = 0
    for r, st in zip(rows, stages):
        k = int(st["index"])
        expect(int(r.attrs["data-stage"]) == k, f"{name}: row of stage {k}")
        for key in ("index", "evaluated", "same_as", "moved",
                    "function_changed", "nan", "gate"):
            expect(int(cell(r, key)) == int(st[key]), f"{name}/{k}: {key}")
        for key in ("label", "pass", "gate_reason"):
            expect(cell(r, key) == text_of(st[key]), f"{name}/{k}: {key}")
        for key in ("max", "p99", "median"):
            expect(same(cell(r, key), st[key]), f"{name}/{k}: {key}")
            if st["evaluated"]:
                expect((k, key) in points and same(points[(k, key)], st[key]),
                       f"{name}/{k}: the plot's {key} point")
            else:
                expect((k, key) not in points,
                       f"{name}/{k}: a {key} point of a stage not evaluated")
        evaluated += int(st["evaluated"])
    expect(evaluated > 0 and len(points) == 3 * evaluated,
           f"{name}: {len(points)} plot points for {evaluated} stages")
    if "descent" in g:
        d = sec.find("section", data_audit=f"{name}/descent")
        expect(d is not None, f"{name}: no descent section")
        check_audit(page, f"{name}/descent", g["descent"])
    else:
        fail(f"{name}: the test's pipeline should have a descent")


def check_audit(page, name, g):
    """One audit group's section (or its skipped line)."""
    sec = page.find("section", data_audit=name)
    if "verdict" not in g.attrs or "outputs" not in g.attrs:
        skip = page.find(data_skipped=name)
        expect(sec is None and skip is not None and
               "skipped" in skip.text(),
               f"audit group {name}: no line saying it was skipped")
        return
    if sec is None:
        fail(f"audit {name}: no section")
        return
    a = g.attrs
    expect(cell(sec, "verdict") == text_of(a["verdict"]), f"{name}: verdict")
    expect(cell(sec, "profile") == text_of(a["profile"]), f"{name}: profile")
    expect(int(cell(sec, "samples")) == a["samples"], f"{name}: samples")
    expect(int(cell(sec, "function_changed")) == a["function_changed"],
           f"{name}: function_changed")
    for k in ("threshold", "function_max_ulps"):
        expect(same(cell(sec, k), a[k]), f"{name}: {k}")
    expect(text_of(a["reason"]) in sec.text(), f"{name}: the reason")
    outs = list(sec.find_all("div", **{"class": "audit-output"}))
    expect(len(outs) == a["outputs"], f"{name}: {len(outs)} outputs")
    for o in outs:
        i = o.attrs["data-output"]
        og = g["outputs"][i]
        oa = og.attrs
        expect(cell(o, "verdict") == text_of(oa["verdict"]),
               f"{name}/{i}: verdict")
        for k in ("count", "better", "worse", "unchanged", "identical",
                  "undecided", "fn_changed", "fn_special"):
            expect(int(cell(o, k)) == oa[k], f"{name}/{i}: {k}")
        expect(same(cell(o, "fn_max_ulps"), oa["fn_max_ulps"]),
               f"{name}/{i}: fn_max_ulps")
        for side in ("before", "after"):
            for k in ("max", "p99", "median"):
                expect(same(cell(o, f"{k}_{side}"), oa[f"{side}_{k}"]),
                       f"{name}/{i}: {side} {k}")
            expect(same(cell(o, f"nan_{side}"), oa[f"{side}_nan"]),
                   f"{name}/{i}: {side} NaN count")
        if "env_known" in oa:
            for k in ("env_known", "wider", "narrower",
                      "after_outside_before"):
                expect(int(cell(o, k)) == oa[k], f"{name}/{i}: {k}")
            for side in ("before", "after"):
                expect(same(cell(o, f"width_median_{side}"),
                            oa[f"width_{side}_median"]),
                       f"{name}/{i}: width {side}")
        else:
            expect(cell(o, "env_known") is None,
                   f"{name}/{i}: envelope figures without a profile")
        for side in ("before", "after"):
            want, _ = hist(og[f"ulp_{side}"][()].ravel())
            got = np.zeros(HIST_BINS, dtype=np.int64)
            for r in o.find_all("rect", data_series=side):
                got[int(r.attrs["data-bin"])] = int(r.attrs["data-n"])
            expect(np.array_equal(got, want),
                   f"{name}/{i}: the {side} histogram")


def page_has_pipeline(page):
    return page.find("section", data_pipeline="softmax_pipe") is not None


def test_audits(outdir):
    os.makedirs(outdir, exist_ok=True)
    res = os.path.join(outdir, "A.h5")
    page = os.path.join(outdir, "audits.html")
    make_audits(res)
    run("report", res, "-o", page)
    tree = parse(page)
    with h5py.File(res, "r") as f:
        expect(len(f["audits"]) == 5, "the file holds five audit groups")
        expect(page_has_pipeline(tree), "no pipeline section")
        check_audits(tree, f)
        for name in f["kernels"]:
            check_kernel(tree, res, name, f["kernels"][name])
    # A damaged stage table is named in an error line and the rest of the
    # pipeline is still shown; a group with the "pipeline" attribute but
    # not a pipeline's other attributes is skipped with its line.
    bad = os.path.join(outdir, "A_bad.h5")
    shutil.copyfile(res, bad)
    with h5py.File(bad, "a") as f:
        del f["audits/softmax_pipe/stages"]
        f["audits/softmax_pipe/stages"] = np.arange(6.0)
        f.create_group("audits/half_pipeline").attrs["pipeline"] = "dumps"
    bad_page = os.path.join(outdir, "audits_bad.html")
    run("report", bad, "-o", bad_page)
    tree = parse(bad_page)
    sec = tree.find("section", data_pipeline="softmax_pipe")
    err = None if sec is None else sec.find(data_error="stages")
    expect(err is not None and
           "/audits/softmax_pipe/stages" in err.text() and
           "compound" in err.text(),
           "a damaged stage table: no error line naming the dataset")
    expect(sec is not None and
           sec.find("section", data_audit="softmax_pipe/descent") is not None,
           "a damaged stage table: the descent is no longer shown")
    skip = tree.find(data_skipped="half_pipeline")
    expect(skip is not None and "skipped" in skip.text() and
           tree.find("section", data_pipeline="half_pipeline") is None,
           "a group with only a pipeline attribute: no skipped line")


# ----------------------------------------------------------- explain trees

def test_explain(outdir):
    """report --explain 2: each output's two worst elements (the first rows
    of its worst table) have the tree "ulpscope explain CASE --output I
    --flat --element K" prints for the same case; a kernel whose case is
    gone gets a note instead, and the report still succeeds."""
    src = os.path.join(os.environ.get("USC_SOURCE_DIR", os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..")),
        "data", "examples", "rope_f32", "normal_s0")
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir)
    case = os.path.join(outdir, "case")
    shutil.copytree(src, case)
    res = os.path.join(outdir, "E.h5")
    page = os.path.join(outdir, "explain.html")
    run("check", case, "--out", res, ok=(0, 3, 4, 5))
    run("report", res, "-o", page, "--explain", "2", "--worst", "3")
    tree = parse(page)
    trees = list(tree.find_all("details", **{"class": "explain"}))
    expect(trees, "no explain trees in the page")
    by_output = {}
    for t in trees:
        by_output.setdefault(int(t.attrs["data-output"]), []).append(t)
    for i, ts in by_output.items():
        expect(len(ts) == 2, f"output {i}: {len(ts)} trees, not 2")
    for i, ts in sorted(by_output.items()):
        tables = list(tree.find_all("table", **{"class": "worst sortable"}))
        rows = list(tables[i].find("tbody").find_all("tr"))
        for r, t in zip(rows, ts):
            k = r.attrs["data-flat"]
            expect(t.attrs["data-flat"] == k,
                   f"output {i}: tree of element {t.attrs['data-flat']}, "
                   f"worst row {k}")
            want = run("explain", case, "--output", str(i), "--flat",
                       "--element", k).stdout
            got = t.find("pre").text()
            expect(got == want, f"output {i} element {k}: the tree differs "
                                f"from ulpscope explain's:\n{got}\n---\n{want}")
    # The case gone: a note, and the page is still written.
    shutil.rmtree(case)
    run("report", res, "-o", page, "--explain", "2")
    tree = parse(page)
    expect(tree.find("details", **{"class": "explain"}) is None and
           "is not in a case directory at hand" in tree.text(),
           "a gone case: no note")


def main():
    test = sys.argv[2]
    if test == "examples":
        test_examples(sys.argv[3])
    elif test == "batch":
        test_batch(sys.argv[3], sys.argv[4])
    elif test == "index":
        test_batch(sys.argv[3], None, sys.argv[4])
    elif test == "shard":
        # A shard of a batch, a fixture of the tests of a big batch.
        out, root, kn = sys.argv[3:6]
        os.makedirs(os.path.dirname(out), exist_ok=True)
        run("batch", root, "--shard", kn, "--out", out, "--quiet",
            "--restart", ok=BATCH_OK)
    elif test == "merge":
        run("merge", *sys.argv[4:], "-o", sys.argv[3], "--force",
            ok=BATCH_OK)
    elif test == "bad":
        test_bad(sys.argv[3])
    elif test == "audits":
        test_audits(sys.argv[3])
    elif test == "explain":
        test_explain(sys.argv[3])
    else:
        raise SystemExit(f"unknown test {test}")
    if failures:
        print(f"{len(failures)} failures")
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
