# SPDX-License-Identifier: MIT
"""Reading recd's Prometheus endpoint: scraping /metrics over loopback and summarising the flush
latency histogram into a percentile."""

import http.client
import math


def scrape(port, path="/metrics", timeout=5.0):
    """(status, body) of one GET against 127.0.0.1:port; (0, "") when it cannot connect."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, resp.read().decode("utf-8", "replace")
    except OSError:
        return 0, ""
    finally:
        conn.close()


def parse(text):
    """Prometheus text -> {"totals": {name: sum over label sets}, "series": [(name, labels, v)]}."""
    totals, series = {}, []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        try:
            key, value = line.rsplit(" ", 1)
            v = float(value)
        except ValueError:
            continue
        name, labels = key, {}
        if "{" in key:
            name, rest = key.split("{", 1)
            for part in rest.rstrip("}").split(","):
                if "=" in part:
                    k, val = part.split("=", 1)
                    labels[k] = val.strip('"')
        series.append((name, labels, v))
        if not name.endswith("_bucket"):
            totals[name] = totals.get(name, 0.0) + v
    return {"totals": totals, "series": series}


def get(port):
    status, body = scrape(port)
    return parse(body) if status == 200 else None


def histogram_quantile(m, name, q):
    """Upper bound (seconds) of the bucket holding quantile q, or None without observations.
    Bucket bounds make this an upper estimate: the true value lies within that bucket."""
    buckets = sorted(((float(lab["le"]) if lab.get("le") not in ("+Inf", None) else math.inf), v)
                     for n, lab, v in m["series"] if n == name + "_bucket")
    if not buckets or buckets[-1][1] <= 0:
        return None
    total = buckets[-1][1]
    for bound, count in buckets:
        if count >= q * total:
            return bound
    return math.inf
