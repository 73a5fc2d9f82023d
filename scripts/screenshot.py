"""Headless-Chromium screenshot of a local HTML page (a trajectory page, a report, a figure).

    python scripts/screenshot.py PAGE.html[#step-3] OUT.png [--width 1280 --height 900] [--full]

For the developer to look at what the pipeline renders. Uses selenium with
/usr/bin/chromedriver when both exist (it honours `#anchors` and waits for images), else
`chromium --headless --screenshot`. Install the browser with scripts/install-browser.sh.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

CHROMEDRIVER = "/usr/bin/chromedriver"
MAX_FULL_HEIGHT = 16000


def page_url(page: str) -> str:
    """file:// URL of a local page, keeping any `#fragment`."""
    path, _, fragment = page.partition("#")
    url = Path(path).resolve().as_uri()
    return f"{url}#{fragment}" if fragment else url


def with_selenium(url: str, out: Path, width: int, height: int, full: bool = False) -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"):
        options.add_argument(arg)
    options.add_argument(f"--window-size={width},{height}")
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}
    try:
        # the viewport is exactly width x height (a window size would include its frame)
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
        driver.get(url)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not driver.execute_script(
            "return document.readyState === 'complete' && "
            "Array.from(document.images).every(i => i.complete)"
        ):
            time.sleep(0.1)
        if full:
            total = driver.execute_script("return document.documentElement.scrollHeight")
            metrics["height"] = min(int(total), MAX_FULL_HEIGHT)
            driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
        driver.save_screenshot(str(out))
    finally:
        driver.quit()


def with_cli(browser: str, url: str, out: Path, width: int, height: int) -> None:
    subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--window-size={width},{height}",
            f"--screenshot={out.resolve()}",
            url,
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("page", help="local HTML file, optionally with #fragment")
    parser.add_argument("out", type=Path, help="PNG to write")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=900)
    parser.add_argument("--full", action="store_true", help="whole page (selenium only)")
    args = parser.parse_args(argv)
    if not Path(args.page.partition("#")[0]).is_file():
        parser.error(f"no such page: {args.page}")
    url = page_url(args.page)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    try:
        import selenium  # noqa: F401

        has_selenium = Path(CHROMEDRIVER).exists()
    except ImportError:
        has_selenium = False
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if has_selenium:
        with_selenium(url, args.out, args.width, args.height, args.full)
    elif browser:
        with_cli(browser, url, args.out, args.width, args.height)
    else:
        print("no chromium found: run scripts/install-browser.sh", file=sys.stderr)
        return 2
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
