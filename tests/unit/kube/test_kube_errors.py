"""HTTP answers map to typed errors."""

from __future__ import annotations

import orjson
import pytest

from kuberay.kube import (
    AlreadyExists,
    ApiError,
    BadRequest,
    Conflict,
    Forbidden,
    Gone,
    Invalid,
    NotFound,
    ServerError,
    TooManyRequests,
    Unauthorized,
)
from kuberay.kube.errors import error_from_response, error_from_status


def status(code: int, reason: str, message: str = "m", **details: object) -> bytes:
    return orjson.dumps(
        {"kind": "Status", "code": code, "reason": reason, "message": message, "details": details}
    )


@pytest.mark.parametrize(
    ("code", "reason", "cls"),
    [
        (400, "BadRequest", BadRequest),
        (401, "Unauthorized", Unauthorized),
        (403, "Forbidden", Forbidden),
        (404, "NotFound", NotFound),
        (409, "AlreadyExists", AlreadyExists),
        (409, "Conflict", Conflict),
        (410, "Gone", Gone),
        (422, "Invalid", Invalid),
        (429, "TooManyRequests", TooManyRequests),
        (500, "InternalError", ServerError),
        (503, "ServiceUnavailable", ServerError),
        (418, "Teapot", ApiError),
    ],
)
def test_status_codes_map_to_types(code: int, reason: str, cls: type[ApiError]) -> None:
    err = error_from_response(code, status(code, reason))
    assert type(err) is cls
    assert err.status == code and err.reason == reason


def test_already_exists_is_a_conflict() -> None:
    assert isinstance(error_from_response(409, status(409, "AlreadyExists")), Conflict)


def test_invalid_carries_causes_and_message() -> None:
    body = status(
        422,
        "Invalid",
        'ConfigMap "Bad" is invalid',
        causes=[{"field": "metadata.name", "reason": "FieldValueInvalid", "message": "bad"}],
    )
    err = error_from_response(422, body)
    assert isinstance(err, Invalid)
    assert err.causes[0]["field"] == "metadata.name"
    assert 'ConfigMap "Bad" is invalid' in str(err)


def test_retry_after_header_and_non_json_body() -> None:
    err = error_from_response(429, b"slow down", {"Retry-After": "3"})
    assert isinstance(err, TooManyRequests)
    assert err.retry_after == 3.0
    assert err.message == "slow down"


def test_watch_error_event_expired_is_gone() -> None:
    err = error_from_status(
        {"code": 410, "reason": "Expired", "message": "too old resource version"}
    )
    assert isinstance(err, Gone)
