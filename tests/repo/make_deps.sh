# SPDX-License-Identifier: MIT
# `make run` and `make deb` install only what recd and rectool need to build and run; the test
# suite's tools (clang, cmocka, a JDK, nats-server, systemd, zsh, lintian...) come with
# `make test` (issue 41). Reads scripts/install-deps.sh's two lists (RECD_DEPS_DRY_RUN) and the
# commands make would run (make -n), and checks that `make deb` builds no bench/ programs.
set -u
: "${RECD_SOURCE_DIR:?}"
command -v make >/dev/null 2>&1 || { echo "SKIP: make not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"
deps="$RECD_SOURCE_DIR/scripts/install-deps.sh"

RECD_DEPS_DRY_RUN=1 bash "$deps" >"$tmp/run" 2>&1 || fail "install-deps.sh (dry run) exits $?: $(cat "$tmp/run")"
RECD_DEPS_DRY_RUN=1 bash "$deps" --test >"$tmp/test" 2>&1 || fail "install-deps.sh --test (dry run) exits $?: $(cat "$tmp/test")"
# What recd and rectool build and load from; what the packages are made with.
for p in build-essential cmake pkg-config libuv1-dev libyaml-dev libjansson-dev libcairo2-dev \
    libstorm-dev libnats-dev scdoc dpkg-dev; do
    grep -qx "$p" "$tmp/run" || fail "make run does not install $p"
done
# Only the tests use these.
for p in clang libclang-rt-14-dev libcmocka-dev openjdk-17-jdk-headless nats-server systemd zsh \
    libembryo-bin lintian man-db; do
    grep -qx "$p" "$tmp/run" && fail "make run installs $p, which only the tests use"
    grep -qx "$p" "$tmp/test" || fail "make test does not install $p"
done
while read -r p; do
    grep -qx "$p" "$tmp/test" || fail "install-deps.sh --test leaves out $p of the run list"
done <"$tmp/run"

# Which list each make target asks for (make -n runs nothing; BUILD points nowhere).
cd "$RECD_SOURCE_DIR" || exit 1
targets() { make -n "$@" BUILD="$tmp/none" ASAN_BUILD="$tmp/none-asan" DEB_BUILD="$tmp/none-deb" 2>&1; }
for target in run deb; do
    targets $target >"$tmp/make.$target"
    grep -q 'install-deps.sh$' "$tmp/make.$target" || fail "make $target does not run install-deps.sh: $(head -n 3 "$tmp/make.$target")"
    grep -q 'install-deps.sh --test' "$tmp/make.$target" && fail "make $target installs the test dependencies"
done
targets test >"$tmp/make.test"
grep -q 'install-deps.sh --test' "$tmp/make.test" || fail "make test does not install the test dependencies"
# make deb builds what it packages: no tests, no bench/ programs.
grep -q -- '-DRECD_TESTS=OFF' "$tmp/make.deb" || fail "make deb builds the tests"
grep -q -- '-DRECD_BENCH=OFF' "$tmp/make.deb" || fail "make deb builds the bench/ programs"
grep -q -- '-DRECD_DPKG_BUILDFLAGS=ON' "$tmp/make.deb" || fail "make deb does not take dpkg-buildflags"

[ "$failures" -eq 0 ] || exit 1
echo "make_deps: make run and make deb install $(wc -l <"$tmp/run") packages, make test $(wc -l <"$tmp/test"); make deb builds without tests or bench/ programs"
