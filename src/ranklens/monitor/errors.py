"""Errors of the monitoring service, each with its HTTP status and a stable code for the JSON error shape.

::

    RanklensError
    └── MonitorError                400 bad_request (and the base of the ones below)
        ├── NotFound                404 not_found
        ├── Conflict                409 conflict (same snapshot id, different content)
        ├── Unauthorized            401 unauthorized (missing or wrong token)
        ├── PayloadTooLarge         413 payload_too_large
        ├── TargetRefused           400 target_not_allowed (a webhook URL to an internal address)
        └── TooManyRequests         429 too_many_requests (login attempts throttled)

Input errors from the rest of ranklens (:class:`ranklens.errors.InputError`, e.g. an unknown measure) are
reported as 400 ``bad_request`` with their own message.
"""

from __future__ import annotations

from ranklens.errors import RanklensError

__all__ = ["Conflict", "MonitorError", "NotFound", "PayloadTooLarge", "TargetRefused", "TooManyRequests", "Unauthorized"]


class MonitorError(RanklensError):
    """An error the API reports with ``status`` and ``code``."""

    status = 400
    code = "bad_request"


class NotFound(MonitorError):
    status = 404
    code = "not_found"


class Conflict(MonitorError):
    status = 409
    code = "conflict"


class Unauthorized(MonitorError):
    status = 401
    code = "unauthorized"


class PayloadTooLarge(MonitorError):
    status = 413
    code = "payload_too_large"


class TargetRefused(MonitorError):
    status = 400
    code = "target_not_allowed"


class TooManyRequests(MonitorError):
    status = 429
    code = "too_many_requests"
