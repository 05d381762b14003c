#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Seeds for fuzz_nats_url: URLs the publishers take, each option and user part once.
set -euo pipefail
dir=${1:?usage: fuzz_nats_url.sh DIR}
mkdir -p "$dir"
i=0
while read -r url; do
    i=$((i + 1))
    printf '%s' "$url" >"$dir/url-$i"
done <<'URLS'
nats://127.0.0.1:4222/rec.eu
nats://[::1]:4222/rec.eu?partitions=16&max_in_flight=64
nats://host/game.eu?buffer=16MiB&ack_timeout=5s&encoding=binary
nats://alice:s3cret%40x@host:4222/p?tls_ca=%2Fetc%2Fca.pem&tls_cert=c.pem&tls_key=k.pem
nats://tok3n@host/p?creds=%2Fetc%2Frecd%2Fuser.creds
nats://host/p?nkey=seed.nk&partitions=8
URLS
