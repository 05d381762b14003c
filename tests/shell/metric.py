# SPDX-License-Identifier: MIT
# A recd metric's value for the shell tests: metric.py HOST:PORT NAME prints the sum of NAME's
# series (NAME with its labels, e.g. 'recd_samples_dropped_total{reason="ring_session_memory"}',
# is that one series) as an integer, 0 when there is none.
import sys
import urllib.request

text = urllib.request.urlopen("http://%s/metrics" % sys.argv[1], timeout=60).read().decode()
want = sys.argv[2]
if "{" in want:
    def name(line):
        return line.split(" ")[0]
else:
    def name(line):
        return line.split("{")[0].split(" ")[0]
print(int(sum(float(line.split()[-1]) for line in text.splitlines()
              if not line.startswith("#") and name(line) == want)))
