"""Screenshots of documentation-site pages opened in a real (headless) browser: serves the built site (``make docs``
writes ``site/``) on 127.0.0.1 and saves one PNG per page, after checking that the page rendered (its title, the
navigation and, for the API page, mkdocstrings' generated signatures).

    python scripts/docs_screenshots.py --site site --out results/docs_screenshots

Needs Chromium, its chromedriver and Selenium, as ``scripts/check_ui.py`` (exits 3 when one is missing).
"""
from __future__ import annotations

import argparse
import functools
import http.server
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from scripts.check_ui import Browser, find_chromium, find_driver, missing_tools  # noqa: E402

# page -> a text the rendered page must show
PAGES = {
    "getting-started/": "The two commands",
    "tutorials/ask-tell/": "Trials that report as they train",
    "reference/api/": "minimize",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=Path("site"), help="the built site (make docs)")
    parser.add_argument("--out", type=Path, default=Path("results/docs_screenshots"))
    args = parser.parse_args()
    if (hint := missing_tools()) is not None:
        print(f"Error: {hint}", file=sys.stderr)
        return 3
    if not (args.site / "index.html").is_file():
        print(f"Error: --site={args.site} has no index.html; run: make docs", file=sys.stderr)
        return 2
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(args.site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    args.out.mkdir(parents=True, exist_ok=True)
    browser = Browser(str(find_chromium()), str(find_driver()), args.out)
    try:
        browser.driver.set_window_size(1400, 1000)
        for page, expected in PAGES.items():
            browser.driver.get(f"http://127.0.0.1:{server.server_port}/{page}")
            text = browser.driver.find_element("tag name", "body").text
            if expected not in text or "hpoflow" not in browser.driver.title:
                print(f"Error: {page} did not render (title {browser.driver.title!r})", file=sys.stderr)
                return 1
            path = args.out / f"{page.strip('/').replace('/', '_')}.png"
            browser.driver.save_screenshot(str(path))
            print(f"{path}: {browser.driver.title}")
    finally:
        browser.driver.quit()
        server.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
