# SPDX-License-Identifier: MIT
# The clients' package versions are recd's: the Python client's recd_client.__version__ (which
# pyproject.toml makes the installed package's version) and the Java client's pom.xml <version>
# must equal RECD_VERSION_STRING (rectool --version), which CMake takes from project(VERSION).
# Bumping recd's version without them fails here, with the files to edit.
set -u
: "${RECTOOL:?RECTOOL must point at the rectool binary}"
clients=$(cd "$(dirname "$0")/../../clients" && pwd)
recd=$("$RECTOOL" --version | sed -n 's/^rectool \([^ ]*\) .*/\1/p')
python=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$clients/python/recd_client/__init__.py")
# The project's own <version>: the first one after <artifactId>recd-client</artifactId>.
java=$(sed -n '/<artifactId>recd-client<\/artifactId>/,/<version>/s/.*<version>\(.*\)<\/version>.*/\1/p' \
    "$clients/java/pom.xml" | head -1)
status=0
[ -n "$recd" ] || { echo "FAIL: no version in rectool --version"; exit 1; }
if [ "$python" != "$recd" ]; then
    echo "FAIL: clients/python/recd_client/__init__.py has __version__ \"$python\", recd is $recd"
    status=1
fi
if [ "$java" != "$recd" ]; then
    echo "FAIL: clients/java/pom.xml has <version>$java</version>, recd is $recd"
    status=1
fi
[ $status -eq 0 ] && echo "ok: the Python and Java clients are version $recd, as recd"
exit $status
