# SPDX-License-Identifier: MIT
# Installs the browser tests' npm packages (package-lock.json: playwright-core only, which drives
# an installed Chromium and downloads none) into DIR/node_modules, once per lock file. Prints the
# node_modules path. PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD keeps any browser download off.
#   usage: install.sh DIR
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dir=$1
mkdir -p "$dir"
if ! cmp -s "$here/package-lock.json" "$dir/package-lock.json" || [ ! -d "$dir/node_modules/playwright-core" ]; then
    cp "$here/package.json" "$here/package-lock.json" "$dir/"
    (cd "$dir" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --silent >&2)
fi
echo "$dir/node_modules"
