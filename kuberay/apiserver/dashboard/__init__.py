"""The dashboard: a web UI the API server serves at ``/dashboard/``, same origin as the API.

The browser side is plain ES modules, one CSS file and ``index.html`` under ``static/``
(package data: in the wheel and the image, nothing fetched from elsewhere, no build step).
The page calls the server's own ``ray.io/v1`` routes, with the user's bearer token in caller
mode. This package serves the files (:mod:`.assets`, :mod:`.routes`) and tells the page how
the server runs (:mod:`.config`).
"""
