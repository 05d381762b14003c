# SPDX-License-Identifier: MIT
# Installs the Python client as a user would, offline, into fresh venvs: with the python3 the
# other client tests use (pyenv's or Debian's) by `pip install --no-build-isolation` (the venv's
# setuptools, wheel from Debian's wheel files), and with Debian's /usr/bin/python3 by pip's build
# isolation fed by `--no-index --find-links /usr/share/python-wheels`. Each install sends a session from a
# folder outside the source tree to a real recd (`python -I`: nothing from PYTHONPATH or the
# current folder), and rectool reads back exactly what was sent; the installed version must be
# recd's (rectool --version).
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
src=$(cd "$(dirname "$0")/../../clients/python" && pwd)
wheels=/usr/share/python-wheels
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
for w in setuptools wheel; do
    if ! ls "$wheels/$w-"*.whl >/dev/null 2>&1; then
        echo "SKIP: no $wheels/$w-*.whl: installing offline needs python3-setuptools-whl and python3-wheel-whl (scripts/install-deps.sh)"
        exit 77
    fi
done
recd_tmpdir recd_python_install
export PYTHONDONTWRITEBYTECODE=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
if ! python3 -m venv "$tmp/venv-nbi" >"$tmp/venv.log" 2>&1; then
    cat "$tmp/venv.log"
    echo "SKIP: $(command -v python3) cannot make a venv (Debian's python3 needs python3-venv)"
    exit 77
fi
version=$("$RECTOOL" --version | sed -n 's/^rectool \([^ ]*\) .*/\1/p')
[ -n "$version" ] || { echo "FAIL: no version in rectool --version"; exit 1; }

fail() { echo "FAIL: $*" >&2; exit 1; }

# pip builds in the folder it is given: install from a copy, so the source tree stays clean.
fresh_copy() {
    rm -rf "$tmp/src"
    cp -r "$src" "$tmp/src"
    rm -rf "$tmp/src/build" "$tmp/src"/*.egg-info
}

install_no_build_isolation() {
    local venv=$tmp/venv-nbi # made above
    "$venv/bin/python" -m pip install -q --no-index --find-links "$wheels" setuptools wheel \
        || fail "setuptools and wheel from $wheels"
    fresh_copy
    "$venv/bin/python" -m pip install -q --no-index --no-build-isolation "$tmp/src" \
        || fail "pip install --no-build-isolation"
}

# Debian's setuptools wheel is patched for Debian's Python (install_layout): this way needs it.
install_isolated() {
    local venv=$tmp/venv-iso # made below
    fresh_copy
    "$venv/bin/python" -m pip install -q --no-index --find-links "$wheels" "$tmp/src" \
        || fail "pip install --no-index --find-links $wheels"
}

mkdir -p "$tmp/out" "$tmp/elsewhere"
cat >"$tmp/recd.yaml" <<YAML
listen:
  - tcp://127.0.0.1:0
output:
  root: $tmp/out
metrics:
  enabled: false
YAML
start_recd "$tmp/recd.log" --config "$tmp/recd.yaml"

# Sends SESSION (ten on-foot states) through the client the venv's python imports.
send_session() {
    local venv=$1 session=$2
    (cd "$tmp/elsewhere" && "$venv/bin/python" -I - "$tcp" "$session" "$venv" "$version" "$src") <<'PY'
import os, sys
from importlib.metadata import version
url, session, venv, want, src = sys.argv[1:]
import recd_client
from recd_client import Client
where = os.path.realpath(recd_client.__file__)
assert where.startswith(os.path.realpath(venv) + os.sep), f"recd_client imported from {where}"
assert not where.startswith(os.path.realpath(src)), f"recd_client imported from the source tree: {where}"
assert version("recd-client") == want, f"installed version {version('recd-client')}, recd is {want}"
assert recd_client.__version__ == want, f"recd_client.__version__ {recd_client.__version__}, recd is {want}"
with Client(url) as c:
    c.open(session, "samp-onfoot")
    for tick in range(10):
        c.state(session, t=tick * 50, left_right=0, up_down=0, keys=0,
                position=[1532.5, -1675.25 + tick, 13.5], rotation=[1.0, 0.0, 0.0, 0.0],
                health=100 - tick, armour=0, weapon=0, additional_key=0, special_action=0,
                velocity=[0.0, 0.5, 0.0], surf_offset=[0.0, 0.0, 0.0], surf_id=0, anim_id=0,
                anim_flags={"frame_delta": 0, "loop": False, "lock_x": False,
                            "lock_y": False, "freeze": False, "time": 0})
    c.close_session(session)
PY
}

# Waits (scaled) for SESSION's finalized file and checks its states with rectool.
check_file() {
    local session=$1 dir=$tmp/out/samp-onfoot/$1 file=""
    for _ in $(seq $((600 * ${RECD_TEST_TIME_SCALE:-1}))); do
        file=$(find "$dir" -name '*.rec' 2>/dev/null | head -1)
        [ -n "$file" ] && break
        sleep 0.1
    done
    [ -n "$file" ] || { cat "$tmp/recd.log"; fail "no finalized file for $session in $dir"; }
    "$RECTOOL" verify "$file" >/dev/null || fail "rectool verify $file"
    "$RECTOOL" export "$file" --to jsonl >"$tmp/$session.jsonl" || fail "rectool export $file"
    python3 - "$tmp/$session.jsonl" <<'PY' || fail "$session: the file does not hold what was sent"
import json, sys
states = [m for m in map(json.loads, open(sys.argv[1])) if m.get("type") == "state"]
assert [s["t"] for s in states] == [i * 50 for i in range(10)], [s.get("t") for s in states]
assert [s["health"] for s in states] == [100 - i for i in range(10)]
assert [s["position"][1] for s in states] == [-1675.25 + i for i in range(10)]
PY
    echo "ok: $session"
}

install_no_build_isolation
send_session "$tmp/venv-nbi" install.nbi || fail "sending through the --no-build-isolation install"
check_file install.nbi
if [ -x /usr/bin/python3 ] && /usr/bin/python3 -m venv "$tmp/venv-iso" >"$tmp/venv-iso.log" 2>&1; then
    install_isolated
    send_session "$tmp/venv-iso" install.iso || fail "sending through the isolated-build install"
    check_file install.iso
else
    echo "note: no Debian /usr/bin/python3 with venv: the --find-links build (Debian's python3 only) is not tried"
fi
echo "ok: recd-client $version installs offline and records from outside the source tree"
