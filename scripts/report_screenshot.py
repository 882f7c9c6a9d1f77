"""A report's page (``report.html`` of ``python -m hpoflow.report``) opened in a real (headless) browser: checks that
it rendered (the heading asked for is there, every figure decoded) and saves a screenshot with the first figure
whose name starts with ``--figure`` scrolled into view (the Pareto figure of the "Several objectives" section)::

    python scripts/report_screenshot.py --report report/mo_classifier/report.html --out results/mo_classifier

Needs Chromium, its chromedriver and Selenium, as ``scripts/check_ui.py`` (exits 3 when one is missing); exits 1
when the page did not render. Prints the screenshot's path and what the page showed.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from scripts.check_ui import Browser, find_chromium, find_driver, missing_tools  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", type=Path, required=True, help="a report.html")
    parser.add_argument("--out", type=Path, required=True, help="the folder the PNG goes to")
    parser.add_argument("--figure", default="pareto_", help="the figure to show: the start of its name (alt text)")
    parser.add_argument("--heading", default="Several objectives", help="a heading the page must show")
    parser.add_argument("--name", default="report_pareto", help="the PNG's name, without .png")
    args = parser.parse_args()
    if (hint := missing_tools()) is not None:
        print(f"Error: {hint}", file=sys.stderr)
        return 3
    if not args.report.is_file():
        print(f"Error: --report={args.report} is not a file; make one with python -m hpoflow.report", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    browser = Browser(str(find_chromium()), str(find_driver()), args.out, timeout=30.0)
    try:
        driver = browser.driver
        driver.set_window_size(1400, 1000)
        driver.get(args.report.resolve().as_uri())
        text = browser.wait_text(args.heading)
        images = driver.execute_script(
            "return Array.from(document.images).map(i => [i.alt, i.complete && i.naturalWidth > 0, i.naturalWidth])")
        broken = [alt for alt, ok, _ in images if not ok]
        target = next((alt for alt, ok, _ in images if alt.startswith(args.figure)), None)
        if args.heading not in text or broken or target is None:
            print(f"Error: {args.report} did not render: heading {args.heading!r} "
                  f"{'found' if args.heading in text else 'missing'}, figures not decoded {broken}, "
                  f"figure {args.figure}* {'found' if target else 'missing'}", file=sys.stderr)
            return 1
        # the figure's section heading at the top of the window, the figure below it
        driver.execute_script("const img = Array.from(document.images).find(i => i.alt === arguments[0]);"
                              "img.scrollIntoView({block: 'end'}); window.scrollBy(0, 40);", target)
        path = args.out / f"{args.name}.png"
        driver.save_screenshot(str(path))
        print(f"{path}: {driver.title!r}, {len(images)} figures decoded "
              f"({', '.join(f'{alt} {w} px' for alt, _, w in images)}); shown: {target}")
    finally:
        browser.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main())
