# SPDX-License-Identifier: MIT
# Builds the Java client with Maven (clients/java/pom.xml) offline from Debian's packaged Maven
# repository (clients/java/maven-debian.xml): compiles, runs the JUnit tests in clients/java/test
# and makes recd-client-VERSION.jar (VERSION: recd's, from rectool --version). Then sends a
# session through that jar to a real recd and reads the file back with rectool. Skipped, saying
# why, without Maven, a JDK or Debian's Maven plugins.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
java_dir=$(cd "$(dirname "$0")/../../clients/java" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
debian_repo=/usr/share/maven-repo
if ! command -v mvn >/dev/null; then
    echo "SKIP: mvn not found: the Maven build of the Java client is not tested (scripts/install-deps.sh installs maven)"
    exit 77
fi
if ! command -v javac >/dev/null || ! command -v java >/dev/null; then
    echo "SKIP: javac/java not found (scripts/install-deps.sh installs openjdk-17-jdk-headless)"
    exit 77
fi
for plugin in maven-compiler-plugin maven-resources-plugin maven-surefire-plugin maven-jar-plugin; do
    if [ ! -d "$debian_repo/org/apache/maven/plugins/$plugin" ]; then
        echo "SKIP: $debian_repo has no $plugin: building offline needs Debian's Maven plugins (scripts/install-deps.sh)"
        exit 77
    fi
done
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
version=$("$RECTOOL" --version | sed -n 's/^rectool \([^ ]*\) .*/\1/p')
[ -n "$version" ] || { echo "FAIL: no version in rectool --version"; exit 1; }
recd_tmpdir recd_java_maven
fail() { echo "FAIL: $*"; exit 1; }

# A local repository and build folder of our own: nothing lands in ~/.m2 or the source tree.
if ! (cd "$tmp" && mvn -B -s "$java_dir/maven-debian.xml" -Dmaven.repo.local="$tmp/m2" \
        -Drecd.build.dir="$tmp/target" -f "$java_dir/pom.xml" package >"$tmp/mvn.log" 2>&1); then
    tail -n 60 "$tmp/mvn.log"
    fail "mvn package"
fi
grep -E '^\[INFO\] Tests run: [1-9][0-9]*, Failures: 0, Errors: 0, Skipped: 0$' "$tmp/mvn.log" \
    || { tail -n 60 "$tmp/mvn.log"; fail "mvn package ran no unit test, or not all passed"; }
jar=$tmp/target/recd-client-$version.jar
[ -f "$jar" ] || { ls "$tmp/target"; fail "no $jar: pom.xml's version is not recd's $version"; }
if grep -q 'Downloading from [^:]*: http' "$tmp/mvn.log"; then
    grep 'Downloading from' "$tmp/mvn.log" | head
    fail "Maven reached for the network"
fi
echo "ok: mvn package built and tested $(basename "$jar")"

mkdir -p "$tmp/classes" "$tmp/out"
javac --release 17 -Xlint:all -Werror -cp "$jar" -d "$tmp/classes" "$here/java/JsonLinesSender.java" \
    || fail "javac JsonLinesSender against the Maven jar"
cat >"$tmp/recd.yaml" <<YAML
listen:
  - tcp://127.0.0.1:0
output:
  root: $tmp/out
metrics:
  enabled: false
YAML
start_recd "$tmp/recd.log" --config "$tmp/recd.yaml"

python3 - >"$tmp/session.jsonl" <<'PY'
import json
key = "maven.jar"
print(json.dumps({"type": "open", "session": key, "format": "samp-onfoot"}))
for tick in range(10):
    print(json.dumps({"type": "state", "session": key, "t": tick * 50, "left_right": 0, "up_down": 0,
                      "keys": 0, "position": [1532.5, -1675.25 + tick, 13.5],
                      "rotation": [1.0, 0.0, 0.0, 0.0], "health": 100 - tick, "armour": 0, "weapon": 0,
                      "additional_key": 0, "special_action": 0, "velocity": [0.0, 0.5, 0.0],
                      "surf_offset": [0.0, 0.0, 0.0], "surf_id": 0, "anim_id": 0,
                      "anim_flags": {"frame_delta": 0, "loop": False, "lock_x": False, "lock_y": False,
                                     "freeze": False, "time": 0}}))
print(json.dumps({"type": "close", "session": key}))
PY
(cd "$tmp" && java -cp "$jar:$tmp/classes" recd.client.JsonLinesSender "$tcp" - <"$tmp/session.jsonl" >"$tmp/sender.out") \
    || { cat "$tmp/sender.out"; fail "JsonLinesSender through the Maven jar"; }
grep -q '"error":null' "$tmp/sender.out" || { cat "$tmp/sender.out"; fail "the client reported an error"; }

file=""
for _ in $(seq $((600 * ${RECD_TEST_TIME_SCALE:-1}))); do
    file=$(find "$tmp/out/samp-onfoot/maven.jar" -name '*.rec' 2>/dev/null | head -1)
    [ -n "$file" ] && break
    sleep 0.1
done
[ -n "$file" ] || { cat "$tmp/recd.log"; fail "no finalized file for maven.jar"; }
"$RECTOOL" verify "$file" >/dev/null || fail "rectool verify $file"
"$RECTOOL" export "$file" --to jsonl >"$tmp/back.jsonl" || fail "rectool export $file"
python3 - "$tmp/back.jsonl" <<'PY' || fail "the file does not hold what was sent"
import json, sys
states = [m for m in map(json.loads, open(sys.argv[1])) if m.get("type") == "state"]
assert [s["t"] for s in states] == [i * 50 for i in range(10)], [s.get("t") for s in states]
assert [s["health"] for s in states] == [100 - i for i in range(10)]
PY
echo "ok: a session sent through the Maven-built jar was recorded"
