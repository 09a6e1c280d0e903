#!/usr/bin/env bash
# Render an iolab HTML report in headless Chromium and fail on any console message (the
# report has no script, so any message is an error: a blocked or failed load, a parse
# problem), on a missing render, or when the rendered DOM lost charts.
#
#   scripts/check-html-chromium.sh [REPORT.html]
#
# Without an argument it builds iolab and renders the synthetic fixtures of tests/fixtures.
# Needs Debian's `chromium` (apt-get install chromium). Not run in CI (the install is large).
set -euo pipefail
cd "$(dirname "$0")/.."

browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z "$browser" ]]; then
    echo "check-html-chromium: chromium not found; install it with: apt-get install chromium" >&2
    exit 2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [[ $# -ge 1 ]]; then
    report=$(realpath "$1")
else
    cargo build --quiet
    report="$work/report.html"
    ./target/debug/iolab report tests/fixtures/run-a.json tests/fixtures/run-b.json \
        tests/fixtures/files.json tests/fixtures/matrix.json tests/fixtures/saturate.json \
        -o "$report"
fi

flags=(--headless --no-sandbox --disable-gpu --disable-background-networking
    --disable-component-update --no-first-run --disable-sync
    --enable-logging=stderr --v=0)

# 1. DOM after rendering, with Chromium's log (console messages are logged as CONSOLE).
timeout 120 "$browser" "${flags[@]}" --user-data-dir="$work/profile1" \
    --dump-dom "file://$report" >"$work/dom.html" 2>"$work/log1.txt" || {
    cat "$work/log1.txt" >&2
    echo "check-html-chromium: chromium failed to render $report" >&2
    exit 1
}
# 2. A phone-sized screenshot: the page must lay out and paint.
timeout 120 "$browser" "${flags[@]}" --user-data-dir="$work/profile2" \
    --window-size=390,2000 --screenshot="$work/phone.png" "file://$report" \
    >/dev/null 2>"$work/log2.txt" || {
    cat "$work/log2.txt" >&2
    echo "check-html-chromium: chromium failed to take a screenshot of $report" >&2
    exit 1
}

status=0
if grep -h "CONSOLE" "$work/log1.txt" "$work/log2.txt" >&2; then
    echo "check-html-chromium: console messages above (expected none)" >&2
    status=1
fi
if [[ ! -s "$work/phone.png" ]]; then
    echo "check-html-chromium: empty screenshot" >&2
    status=1
fi
want=$(grep -o "<svg" "$report" | wc -l)
got=$(grep -o "<svg" "$work/dom.html" | wc -l)
if [[ "$want" -ne "$got" ]]; then
    echo "check-html-chromium: $want charts in the file, $got in the rendered page" >&2
    status=1
fi
if [[ $status -eq 0 ]]; then
    echo "check-html-chromium: OK: $report rendered, $got charts, no console messages"
fi
exit $status
