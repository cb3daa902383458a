"""The web server: gunicorn processes running uvicorn's event loop in front of the WSGI app.

A thread of a threaded WSGI server is held by its connection from the first byte of a request
to the last byte of the answer, so a few clients that send slowly (or not at all) hold every
thread, and the service stops for everyone. Here an event loop reads each request whole,
within deadlines, while holding no thread; only a complete request is handed to a thread that
runs Django. The pieces:

- ``protocol.EdgeProtocol``: the asyncio protocol in front of uvicorn's own, with deadlines,
  size limits, a connection cap and errors in the API's JSON shape (``refusals``); it passes
  each chunk on to uvicorn's protocol and watches the answers come back (``relay``);
- ``bridge.WsgiBridge``: the ASGI app that buffers the body, runs Django's WSGI app in a pool of
  threads, and streams long answers with backpressure;
- ``worker.Worker``: the gunicorn worker class that puts the two together.
"""
