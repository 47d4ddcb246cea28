#!/usr/bin/env bash
# Installs the system programs the test suite runs for real (idempotent; needs root or sudo).
# Each entry: a command the tests need and the Debian package that provides it. Nothing is
# installed when every command is already there.
set -euo pipefail
wanted=(
    "node:nodejs"   # the official MCP conformance suite (npm package) runs on Node
    "npm:npm"
    "mosquitto:mosquitto"   # the MQTT driver's tests run a real broker
)
# Optional: when one cannot be installed, its tests skip and say why; the rest still run.
optional=(
    "chromium:chromium"     # mcs inspect's page is tested end to end in headless Chromium (Playwright)
)
missing=()
for pair in "${wanted[@]}"; do
    cmd=${pair%%:*}; pkg=${pair#*:}
    command -v "$cmd" >/dev/null 2>&1 || missing+=("$pkg")
done
missing_optional=()
for pair in "${optional[@]}"; do
    cmd=${pair%%:*}; pkg=${pair#*:}
    # Ubuntu names the program chromium-browser; the tests accept either.
    command -v "$cmd" >/dev/null 2>&1 || command -v "$cmd-browser" >/dev/null 2>&1 || missing_optional+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && [ ${#missing_optional[@]} -eq 0 ] && exit 0
sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
# A failed index update stops the script only when a required package is missing.
$sudo_cmd apt-get update -qq || [ ${#missing[@]} -eq 0 ]
if [ ${#missing[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}"
fi
for pkg in "${missing_optional[@]}"; do
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "$pkg" \
        || echo "system-deps: could not install $pkg; the tests that need it will skip" >&2
done
