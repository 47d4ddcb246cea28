#!/usr/bin/env bash
# Installs the system programs the test suite runs for real (idempotent; needs root or sudo).
# Each entry: a command the tests need and the Debian package that provides it.
set -euo pipefail
wanted=(
    "node:nodejs"   # the official MCP conformance suite (npm package) runs on Node
    "npm:npm"
    "mosquitto:mosquitto"   # the MQTT driver's tests run a real broker
    "chromium:chromium"     # mcs inspect's page is tested end to end in headless Chromium (Playwright)
)
missing=()
for pair in "${wanted[@]}"; do
    cmd=${pair%%:*}; pkg=${pair#*:}
    command -v "$cmd" >/dev/null 2>&1 || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
$sudo_cmd apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}"
