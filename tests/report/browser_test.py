#!/usr/bin/env python3
"""`ulpscope report` in a real browser: headless Chromium (docs/report.md).

usage: browser_test.py ULPSCOPE ARTIFACTS example CASE_DIR
       browser_test.py ULPSCOPE ARTIFACTS batch ROOT
       browser_test.py ULPSCOPE ARTIFACTS index INDEX   (a batch's, made
                                                        beforehand)
       browser_test.py ULPSCOPE ARTIFACTS audits -      (a file of audits
                                                        and a kernel)

Writes the result file (check --attribute of one case, or a batch of
ROOT), its report, then has Chromium load the page from disk, dump the DOM
after the page's script ran (--dump-dom) and take a screenshot; both are
kept in ARTIFACTS (under the build directory) for a person to look at.
Checks: the dumped DOM holds the figures h5py reads from the same file
(the checks of report_test.py, run on Chromium's DOM), the script ran to
its end (the body's data-script), and the browser logged no console
message (the page logs none, so any, an uncaught error included, fails).
First, to know that console errors are seen at all, a page that throws
must be caught.

Exit 77 (skipped) when Chromium, numpy or h5py is missing: tools/setup.sh
installs Debian's chromium and python3-h5py.
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

CHROMIUM = (os.environ.get("USC_CHROMIUM") or shutil.which("chromium") or
            shutil.which("chromium-browser"))
if not CHROMIUM:
    print("skipped: chromium is not installed (tools/setup.sh installs "
          "Debian's chromium)")
    sys.exit(77)

import report_test as rt  # noqa: E402  (exits 77 without numpy or h5py)


def browse(page, artifacts, tag):
    """Chromium's DOM of the page, and its console lines."""
    with tempfile.TemporaryDirectory() as profile:
        base = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                "--no-first-run", "--disable-extensions",
                f"--user-data-dir={profile}", "--enable-logging=stderr",
                "--v=0", "--virtual-time-budget=5000"]
        url = "file://" + os.path.abspath(page)
        p = subprocess.run(base + ["--dump-dom", url], capture_output=True,
                           text=True, timeout=120)
        dom = os.path.join(artifacts, f"{tag}.dom.html")
        with open(dom, "w", encoding="utf-8") as f:
            f.write(p.stdout)
        console = [line for line in p.stderr.splitlines()
                   if ":CONSOLE" in line or "Uncaught" in line]
        if tag != "selfcheck":
            shot = os.path.join(artifacts, f"{tag}.png")
            s = subprocess.run(base + [f"--screenshot={shot}",
                                       "--window-size=1280,2400",
                                       "--hide-scrollbars", url],
                               capture_output=True, text=True, timeout=120)
            console += [line for line in s.stderr.splitlines()
                        if ":CONSOLE" in line or "Uncaught" in line]
            rt.expect(os.path.getsize(shot) > 10000
                      if os.path.exists(shot) else False,
                      f"{tag}: no screenshot at {shot}")
        if p.returncode != 0 or not p.stdout.strip():
            rt.fail(f"{tag}: chromium exit {p.returncode}, no DOM:\n"
                    f"{p.stderr[-2000:]}")
        return dom, console


def main():
    ulpscope, artifacts, mode, src = sys.argv[1:5]
    rt.ULPSCOPE = ulpscope
    shutil.rmtree(artifacts, ignore_errors=True)
    os.makedirs(artifacts)

    # The detector first: a page that throws must be seen to.
    bad = os.path.join(artifacts, "selfcheck.html")
    with open(bad, "w") as f:
        f.write("<!DOCTYPE html><html><body><script>"
                "undefinedFunction();</script></body></html>")
    _, console = browse(bad, artifacts, "selfcheck")
    if not any("Uncaught" in line for line in console):
        rt.fail("a page that throws logged no console error: the console "
                "cannot be watched this way on this Chromium")

    res = os.path.join(artifacts, "R.h5")
    page = os.path.join(artifacts, "report.html")
    if mode == "example":
        rt.run("check", src, "--attribute", "--out", res, ok=(0, 3, 4, 5))
    elif mode == "index":
        res = src
    elif mode == "audits":
        rt.make_audits(res)
    else:
        rt.run("batch", src, "--out", res, "--quiet", ok=rt.BATCH_OK)
    rt.run("report", res, "-o", page)
    dom, console = browse(page, artifacts, mode)
    rt.expect(not console, f"{mode}: console messages:\n" + "\n".join(console))
    tree = rt.parse(dom)
    body = tree.find("body")
    rt.expect(body is not None and body.attrs.get("data-script") == "done",
              f"{mode}: the page's script did not run to its end")
    with rt.h5py.File(res, "r") as f:
        if mode == "example":
            for name in f["kernels"]:
                rt.check_kernel(tree, res, name, f["kernels"][name])
        elif mode == "audits":
            rt.check_audits(tree, f)
        else:
            b = f["batch"][()]
            table = tree.find("table", id="cases-table")
            cols = rt.columns(table)
            rows = list(table.find("tbody").find_all("tr"))
            rt.expect(len(rows) == len(b), f"{len(rows)} rows, {len(b)} cases")
            byidx = {int(r.attrs["data-index"]): r for r in rows}
            for rec in b:
                r = byidx.get(int(rec["index"]))
                rt.expect(r is not None and
                          rt.col(r, cols, "verdict") ==
                          rec["verdict"].decode() and
                          rt.same(rt.col(r, cols, "max_ulp_oracle"),
                                  rec["max_ulp_oracle"]),
                          f"case {rec['index']}: figures in Chromium's DOM")
            vt = tree.find("table", id="verdicts")
            verdicts = [v.decode() for v in b["verdict"]]
            rt.expect(int(rt.cell(vt, "verdict_legit")) ==
                      verdicts.count("legit"), "legit count")
            for s in list(tree.find_all("section"))[:2]:
                name = rt.section_link(tree, b, s)
                rt.check_kernel_brief(s, f["kernels"][name], name)
    print(f"artifacts: {artifacts}")
    if rt.failures:
        print(f"{len(rt.failures)} failures")
        sys.exit(1)
    print("ok")


main()
