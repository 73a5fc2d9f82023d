#!/usr/bin/env bash
# Optional: headless Chromium and its driver, for the trajectory viewer's browser test
# (tests/test_viewer.py skips it when they are absent) and for scripts/screenshot.py.
# Installs /usr/bin/chromium and /usr/bin/chromedriver (Debian/Ubuntu package names);
# the Python side is selenium, in the `test` extra.
set -euo pipefail
apt-get update
apt-get install -y chromium chromium-driver
