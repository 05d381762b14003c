# SPDX-License-Identifier: MIT
# recd_client: send game-server samples to recd from Python, standard library only.
# Client (client.py) does the sockets; wire.py the encodings; formats.py the per-format table.
from .client import Client, ServerError
from .formats import FORMATS, EncodeError, WireFormat
from .wire import encode_binary, encode_ndjson, parse_url

__all__ = ["Client", "ServerError", "EncodeError", "FORMATS", "WireFormat",
           "encode_binary", "encode_ndjson", "parse_url"]
__version__ = "0.1.0"
