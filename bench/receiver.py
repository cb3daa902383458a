"""A fast webhook receiver for the load bench: answers 204, counts every webhook-id.

    python3 bench/receiver.py PORT [HOST]   # HOST: the address to listen on, 127.0.0.1 unless given

GET /stats answers {"received", "unique", "duplicates", "last_at"} (last_at: Unix time of the
last webhook). Standard library only; asyncio, so one process keeps up with the service.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

seen: dict[str, int] = {}
state = {"received": 0, "last_at": 0.0}


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            headers = {
                name.strip().lower(): value.strip()
                for name, _, value in (line.partition(":") for line in lines[1:] if line)
            }
            length = int(headers.get("content-length", 0))
            if length:
                await reader.readexactly(length)
            if lines[0].startswith("GET /stats"):
                body = json.dumps(
                    {
                        "received": state["received"],
                        "unique": len(seen),
                        "duplicates": sum(count - 1 for count in seen.values()),
                        "last_at": state["last_at"],
                    }
                ).encode()
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"Content-Length: {len(body)}\r\n\r\n".encode()
                    + body
                )
            else:
                message_id = headers.get("webhook-id", "")
                seen[message_id] = seen.get(message_id, 0) + 1
                state["received"] += 1
                state["last_at"] = time.time()
                writer.write(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
        pass
    finally:
        writer.close()


async def main(port: int, host: str) -> None:
    server = await asyncio.start_server(handle, host, port, backlog=1024)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else "127.0.0.1"))
