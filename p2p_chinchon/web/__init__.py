"""The browser table: each seat's own page, served on loopback by the seat's own node.

:mod:`.server` is the web server (hypercorn's trio worker, a Starlette application, the security
checks and the WebSocket hub), :mod:`.model` turns a seat's state into the page's JSON,
:mod:`.frontend` is the node's third front end (beside the full screen and line mode). The page
itself is in ``static/``. The contract between the server and the page is docs/web.md.
"""
