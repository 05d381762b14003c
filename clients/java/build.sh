#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the Java client with the JDK's own tools: javac into OUT/classes, then OUT/recd-client.jar.
# Usage: clients/java/build.sh OUT
set -euo pipefail
out=${1:?usage: build.sh OUT}
src="$(cd "$(dirname "$0")" && pwd)/src"
command -v javac >/dev/null || { echo "javac not found (install openjdk-17-jdk-headless)" >&2; exit 3; }
rm -rf "$out/classes"
mkdir -p "$out/classes"
find "$src" -name '*.java' | sort >"$out/sources.txt"
javac --release 17 -Xlint:all -Werror -d "$out/classes" @"$out/sources.txt"
jar --create --file "$out/recd-client.jar" -C "$out/classes" .
echo "$out/recd-client.jar"
