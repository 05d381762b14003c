# SPDX-License-Identifier: MIT
# recd_client: send game-server samples to recd from Python, standard library only.
# Client (client.py) does the sockets; wire.py the encodings; formats.py the per-format table;
# nats.py publishes to NATS JetStream for a recd fleet (TLS with ssl; nkeys.py and ed25519.py
# sign in with NATS credentials).
from .client import Client, ServerError
from .nats import PublishError, fleet_partition, fleet_subject
from .formats import FORMATS, EncodeError, WireFormat
from .wire import encode_binary, encode_ndjson, parse_url

__all__ = ["Client", "ServerError", "PublishError", "EncodeError", "FORMATS", "WireFormat",
           "encode_binary", "encode_ndjson", "parse_url", "fleet_partition", "fleet_subject"]
# recd's version (project(VERSION) in the top CMakeLists.txt), also the installed package's
# (pyproject.toml); tests/clients/client_versions.sh fails when the two differ.
__version__ = "0.1.0"
