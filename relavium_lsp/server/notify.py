"""Sending a notification whose params are plain JSON already, without pygls's converter pass.

pygls's ``protocol.notify`` wraps the params in an attrs ``JsonRPCNotification`` and has
``json.dumps`` call back into the cattrs converter for it, which walks and copies the whole
params dict again — about three quarters of the cost of sending one
``relavium/sessionEvent`` token notification (issue 25; ``bench/token_tail.py``). The events
we forward are dicts of JSON types already (``StampedEvent.to_wire``), so
:func:`notify_json` builds the same message object pygls's converter would, in the same key
order, and writes it exactly as ``JsonRPCProtocol._send_data`` does: the same bytes
(a unit test compares them), the same logging, the same handling of a missing writer and of
write errors.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from typing import Any

from pygls.exceptions import JsonRpcInternalError
from pygls.protocol import JsonRPCProtocol

# pygls's own logger: a DEBUG log shows these messages exactly as it shows pygls's.
_rpc_logger = logging.getLogger("pygls.protocol.json_rpc")
# An asynchronous writer's (websocket) pending sends, kept referenced until they are done.
_pending: set[asyncio.Future[Any]] = set()


def notify_json(protocol: JsonRPCProtocol, method: str, params: dict[str, Any]) -> None:
    """``protocol.notify(method, params)`` for ``params`` made of JSON types only."""
    _rpc_logger.debug("Sending notification: '%s' %s", method, params)
    writer = protocol.writer
    if writer is None:
        _rpc_logger.error("Unable to send data, no available transport!")
        return
    try:
        # The key order of pygls's unstructured JsonRPCNotification.
        body = json.dumps({"method": method, "jsonrpc": JsonRPCProtocol.VERSION, "params": params})
        _rpc_logger.info("Sending data: %s", body)
        if protocol._include_headers:
            header = (
                f"Content-Length: {len(body)}\r\n"
                f"Content-Type: {protocol.CONTENT_TYPE}; charset={protocol.CHARSET}\r\n\r\n"
            )
            body = header + body
        sent = writer.write(body.encode(protocol.CHARSET))
        if inspect.isawaitable(sent):
            future = asyncio.ensure_future(sent)
            _pending.add(future)
            future.add_done_callback(_pending.discard)
    except BrokenPipeError:
        _rpc_logger.exception("Error sending data. BrokenPipeError", exc_info=True)
        raise
    except Exception as error:
        _rpc_logger.exception("Error sending data", exc_info=True)
        protocol._server._report_server_error(error, JsonRpcInternalError)
