"""Drives the toolmark desk in headless Chromium (Debian's, through Playwright's
`executable_path`; no browser is downloaded) and checks what a person would see.

    desk_browser.py BASE_URL ARTIFACTS_DIR TOOLS_JSON [CHROMIUM]

BASE_URL serves `toolmark_api::router` over the API tests' populated fixture (see
api/tests/desk.rs). The script visits every page, fails on any console error, page error or
failed request, checks the accessibility basics (lang, one main landmark, one h1, a label for
every form control), clicks Verify on /log (must succeed), verifies a tampered bundle (a flipped
proof hash, a flipped checkpoint signature, then a forged witness cosignature: all must fail;
the fixture's checkpoint is cosigned by two witnesses, whose cosignatures must verify), checks
TOOLS_JSON on /check against https://memory.example.com/mcp (must be `same`, verified in the
browser, cosignatures included), and saves a full-page screenshot of each step in ARTIFACTS_DIR. Exits 0 when everything held; prints one
line per step and a JSON summary (also written to ARTIFACTS_DIR/report.json).
"""

import base64
import json
import os
import re
import sys
import time

from playwright.sync_api import sync_playwright

MEMORY_URL = "https://memory.example.com/mcp"
TIMEOUT_MS = 20_000


class Failure(Exception):
    pass


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    base = sys.argv[1].rstrip("/")
    artifacts = sys.argv[2]
    tools_text = open(sys.argv[3], encoding="utf-8").read()
    chromium = sys.argv[4] if len(sys.argv) > 4 else os.environ.get("TOOLMARK_CHROMIUM", "/usr/bin/chromium")
    os.makedirs(artifacts, exist_ok=True)

    report = {"base": base, "pages": [], "checks": [], "errors": []}
    problems = []  # console errors, page errors, failed requests

    def step(name, detail=""):
        report["checks"].append({"step": name, "detail": detail})
        print(f"ok   {name} {detail}".rstrip(), flush=True)

    def check(cond, message):
        if not cond:
            raise Failure(message)

    started = time.monotonic()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=chromium,
            headless=True,
            args=["--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"],
            timeout=TIMEOUT_MS * 3,
        )
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            context.set_default_timeout(TIMEOUT_MS)
            page = context.new_page()
            where = {"url": ""}

            def on_console(msg):
                if msg.type in ("error", "assert"):
                    problems.append(f"console {msg.type} on {where['url']}: {msg.text}")

            def on_page_error(err):
                problems.append(f"page error on {where['url']}: {err}")

            def on_request_failed(req):
                # net::ERR_ABORTED is the browser cancelling a request it no longer needs (a
                # favicon still loading when the test navigates on): not a failure of the page.
                if "ERR_ABORTED" in (req.failure or ""):
                    return
                problems.append(f"request failed on {where['url']}: {req.url} {req.failure}")

            def on_response(resp):
                if resp.status >= 400:
                    problems.append(f"HTTP {resp.status} on {where['url']}: {resp.url}")

            page.on("console", on_console)
            page.on("pageerror", on_page_error)
            page.on("requestfailed", on_request_failed)
            page.on("response", on_response)

            def shot(name):
                path = os.path.join(artifacts, f"{name}.png")
                page.screenshot(path=path, full_page=True)
                return path

            def visit(path, name):
                where["url"] = base + path
                resp = page.goto(base + path, wait_until="load")
                check(resp is not None and resp.status == 200, f"GET {path}: {resp and resp.status}")
                csp = resp.headers.get("content-security-policy", "")
                check("default-src 'self'" in csp, f"{path}: CSP is {csp!r}")
                a11y = page.evaluate(
                    """() => {
                      const controls = [...document.querySelectorAll('input:not([type=hidden]), select, textarea')];
                      return {
                        lang: document.documentElement.lang,
                        mains: document.querySelectorAll('main').length,
                        h1s: document.querySelectorAll('h1').length,
                        navs: document.querySelectorAll('nav[aria-label]').length,
                        unlabelled: controls.filter(c => c.labels.length === 0).map(c => c.id || c.name),
                        title: document.title,
                      };
                    }"""
                )
                check(a11y["lang"] == "en", f"{path}: lang is {a11y['lang']!r}")
                check(a11y["mains"] == 1, f"{path}: {a11y['mains']} main landmarks")
                check(a11y["h1s"] == 1, f"{path}: {a11y['h1s']} h1 headings")
                check(a11y["navs"] >= 1, f"{path}: no labelled nav")
                check(not a11y["unlabelled"], f"{path}: controls without a label: {a11y['unlabelled']}")
                file = shot(name)
                # Keyboard: the first Tab lands on the skip link, which is visible when focused.
                page.keyboard.press("Tab")
                focused = page.evaluate("() => document.activeElement && document.activeElement.className")
                check(focused == "skip", f"{path}: first Tab focuses {focused!r}, not the skip link")
                visible = page.evaluate("() => document.activeElement.getBoundingClientRect().left >= 0")
                check(visible, f"{path}: the focused skip link is off screen")
                page.evaluate("() => document.activeElement.blur()")
                report["pages"].append({"path": path, "title": a11y["title"], "screenshot": file})
                step(f"page {path}", a11y["title"])

            # 1. Servers, with search and filter through the form.
            visit("/", "01-servers")
            rows = page.locator("#servers tbody tr").count()
            check(rows == 5, f"/ lists {rows} targets, expected 5")
            page.fill("#q", "memory")
            page.select_option("#state", "observed")
            where["url"] = base + "/?q=memory"
            page.click("form.filters button[type=submit]")
            page.wait_for_load_state("load")
            check(page.locator("#servers tbody tr").count() == 1, "search for memory did not give one row")
            shot("02-servers-search")
            step("search", page.url)
            visit("/?state=failing", "03-servers-failing")

            # 2. A target page: follow the link from the list.
            visit("/?q=memory", "04-servers-memory")
            page.click("#servers tbody a")
            page.wait_for_load_state("load")
            memory_page = page.url
            memory_id = memory_page.rsplit("/", 1)[-1]
            check(re.fullmatch(r"[0-9a-f]{16}", memory_id) is not None, f"target link {memory_page}")
            visit(f"/s/{memory_id}", "05-target-memory")
            check(page.locator("#tools dt").count() > 0, "the memory target lists no tools")
            check("create_entities" in page.inner_text("#tools"), "create_entities is not listed")
            check(page.locator("#timeline tbody tr").count() == 2, "the timeline does not have 2 rows")
            # Its badge is an image that loaded (an SVG of non-zero size), and the snippets name it.
            badge = page.evaluate(
                "() => { const i = document.getElementById('target-badge'); return i.complete ? [i.naturalWidth, i.naturalHeight] : null; }"
            )
            check(badge is not None and badge[0] > 60 and badge[1] == 20, f"the target's badge did not load: {badge}")
            check(f"/badge/{memory_id}.svg" in page.inner_text("#badge-markdown"), "the Markdown snippet")

            # 3. Changes, the filter, one change.
            visit("/changes", "06-changes")
            check(page.locator("#changes tbody tr").count() == 1, "/changes does not list 1 change")
            visit("/changes?class=benign", "07-changes-benign")
            check(page.locator("#changes").count() == 0, "a benign change is listed")
            visit("/changes?class=dangerous", "08-changes-dangerous")
            href = page.locator("#changes tbody th a").first.get_attribute("href")
            visit(href, "09-change")
            check(page.get_attribute("#change-class", "data-class") == "dangerous", "the change is not dangerous")
            check("hint-changed" in page.inner_text("#signals"), "no hint-changed signal shown")
            files_link = page.locator("main .lead a").first.get_attribute("href")
            visit(files_link, "10-target-files")
            check(page.locator("#target-changes tbody tr").count() == 1, "the files target has no change row")

            # 4. The log: verify the checkpoint and the memory target's latest entry.
            visit(f"/log?target={memory_id}", "11-log")
            page.click("#verify-button")
            page.wait_for_selector("#verify-result[data-ok]")
            ok = page.get_attribute("#verify-result", "data-ok")
            text = page.inner_text("#verify-result")
            shot("12-log-verified")
            check(ok == "true", f"verification on /log failed: {text} / {page.inner_text('#verify-steps')}")
            steps = page.inner_text("#verify-steps")
            for who in ("w1", "w3"):
                check(f"witness {who} cosigned the current checkpoint at " in steps, f"/log: no verified cosignature by {who}: {steps}")
                check(f"witness {who} cosigned the bundle's checkpoint at " in steps, f"/log: the bundle's cosignature by {who}: {steps}")
            check("2 of 3 witnesses cosigned" in steps, f"/log: the witness count: {steps}")
            check("newest cosignature" in text, f"/log: no newest cosignature time: {text}")
            step("log verified", text)

            # 5. A tampered bundle: one character of the first proof hash flipped.
            bundle = page.evaluate(
                "async (id) => (await fetch('/api/v1/lookup/' + id)).text()", memory_id
            )
            lines = bundle.split("\n")
            at = next(i for i, l in enumerate(lines) if l.startswith("index ")) + 1
            check(len(lines[at]) == 44, f"the bundle has no proof hash after the index line: {lines[at]!r}")
            h = lines[at]
            lines[at] = ("B" if h[0] == "A" else "A") + h[1:]
            page.fill("#verify-bundle", "\n".join(lines))
            page.click("#verify-button")
            page.wait_for_selector("#verify-result[data-ok]")
            ok = page.get_attribute("#verify-result", "data-ok")
            text = page.inner_text("#verify-result")
            shot("13-log-tampered-proof")
            check(ok == "false", f"a tampered proof verified: {text}")
            check("inclusion proof" in text, f"the tampered proof failed for another reason: {text}")
            step("tampered proof refused", text)

            # The same bundle with its checkpoint signature altered.
            lines = bundle.split("\n")
            sig = next(i for i, l in enumerate(lines) if l.startswith("\u2014 "))
            name, value = lines[sig].rsplit(" ", 1)
            k = 20  # inside the signature bytes (after the 4-byte key id)
            value = value[:k] + ("B" if value[k] == "A" else "A") + value[k + 1:]
            lines[sig] = f"{name} {value}"
            page.fill("#verify-bundle", "\n".join(lines))
            page.click("#verify-button")
            page.wait_for_selector("#verify-result[data-ok]")
            ok = page.get_attribute("#verify-result", "data-ok")
            text = page.inner_text("#verify-result")
            shot("14-log-tampered-signature")
            check(ok == "false", f"a tampered checkpoint signature verified: {text}")
            check("signature" in text, f"the tampered signature failed for another reason: {text}")
            step("tampered signature refused", text)

            # The same bundle with a witness's cosignature altered (a forged cosignature line:
            # 76 bytes, a flipped signature byte).
            lines = bundle.split("\n")
            cosig = [i for i, l in enumerate(lines) if l.startswith("\u2014 ") and len(base64.b64decode(l.rsplit(" ", 1)[1])) == 76]
            check(len(cosig) == 2, f"the bundle's checkpoint has {len(cosig)} cosignatures, expected 2")
            name, value = lines[cosig[0]].rsplit(" ", 1)
            raw = bytearray(base64.b64decode(value))
            raw[40] ^= 1  # inside the Ed25519 signature (after key id and timestamp)
            lines[cosig[0]] = f"{name} {base64.b64encode(bytes(raw)).decode()}"
            page.fill("#verify-bundle", "\n".join(lines))
            page.click("#verify-button")
            page.wait_for_selector("#verify-result[data-ok]")
            ok = page.get_attribute("#verify-result", "data-ok")
            text = page.inner_text("#verify-result")
            shot("14b-log-forged-cosignature")
            check(ok == "false", f"a forged cosignature verified: {text}")
            check("cosignature by witness" in text and "does not verify" in text, f"the forged cosignature failed for another reason: {text}")
            step("forged cosignature refused", text)

            # And the genuine bundle pasted back verifies again.
            page.fill("#verify-bundle", bundle)
            page.click("#verify-button")
            page.wait_for_selector("#verify-result[data-ok]")
            check(page.get_attribute("#verify-result", "data-ok") == "true", "the pasted genuine bundle failed")
            step("pasted bundle verified")

            # 6. /check with the memory set.
            visit("/check", "15-check")
            page.fill("#check-endpoint", MEMORY_URL)
            page.fill("#check-tools", tools_text)
            page.click("#check-button")
            page.wait_for_selector("#check-verify[data-ok]")
            match = page.get_attribute("#check-match", "data-match")
            ok = page.get_attribute("#check-verify", "data-ok")
            text = page.inner_text("#check-verify")
            shot("16-check-same")
            check(match == "same", f"/check says {match!r}, expected same")
            check(ok == "true", f"/check verification failed: {text} / {page.inner_text('#check-steps')}")
            check("proved in the log" in text, f"/check verified no proof: {text}")
            check("cosigned by 2 witness(es)" in text, f"/check: the cosignatures were not verified: {text}")
            check("witness w1 cosigned the proof's checkpoint at " in page.inner_text("#check-steps"), "/check: no step for w1's cosignature")
            check("Log cosigned by witnesses at" in page.inner_text("#check-facts"), "/check: the answer's cosignedAt is not shown")
            step("check same, verified", text)

            # A changed set: `different`, still a verified signature, no proof.
            changed = tools_text.replace("Create multiple new entities", "Create many new entities", 1)
            check(changed != tools_text, "could not alter the tools")
            page.fill("#check-tools", changed)
            page.click("#check-button")
            page.wait_for_selector("#check-verify[data-ok]")
            match = page.get_attribute("#check-match", "data-match")
            ok = page.get_attribute("#check-verify", "data-ok")
            shot("17-check-different")
            check(match == "different", f"/check says {match!r} for a changed set")
            check(ok == "true", f"/check could not verify the answer's signature: {page.inner_text('#check-verify')}")
            step("check different, signature verified")

            # 7. Stats: the numbers and the two server-drawn charts, rendered with a size and
            # one bar per day (no script on the page).
            visit("/stats", "18-stats")
            for chart in ("#chart-observations", "#chart-changes"):
                box = page.locator(chart).bounding_box()
                check(box is not None and box["width"] > 200 and box["height"] > 40, f"/stats: {chart} is not drawn: {box}")
                bars = page.locator(f"{chart} rect.bar").count()
                check(bars == 30, f"/stats: {chart} has {bars} bars, expected 30")
                label = page.evaluate(
                    "(sel) => { const s = document.querySelector(sel); return s.getAttribute('aria-labelledby').split(' ').map(i => document.getElementById(i).textContent).join(' | '); }",
                    chart,
                )
                check("per day" in label, f"/stats: {chart} is labelled {label!r}")
            # (Which bars are tall depends on today's date; desk.rs checks them on a fixed clock.)
            check(page.locator("script").count() == 0, "/stats has a script")
            check("5 remotes" in page.inner_text("#target-counts"), "/stats: target counts")
            step("stats page, charts drawn")

            # 8. A 404 page renders in the layout (its 404 is expected, not a problem).
            where["url"] = base + "/s/0000000000000000"
            before = len(problems)
            resp = page.goto(base + "/s/0000000000000000", wait_until="load")
            check(resp.status == 404, f"unknown target gave {resp.status}")
            del problems[before:]
            shot("20-not-found")
            step("404 page")
        except Failure as e:
            report["errors"].append(str(e))
            try:
                page.screenshot(path=os.path.join(artifacts, "failure.png"), full_page=True)
            except Exception:  # noqa: BLE001 (best effort)
                pass
        finally:
            browser.close()

    report["errors"].extend(problems)
    report["seconds"] = round(time.monotonic() - started, 1)
    with open(os.path.join(artifacts, "report.json"), "w", encoding="utf-8") as f:
        json.dump(report, f, indent=2)
    print(json.dumps(report, indent=2))
    for e in report["errors"]:
        print(f"FAIL {e}", file=sys.stderr)
    return 1 if report["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
